import { openSync, writeSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';

/** What the lines are handed to once per turn: pino's own destination (sonic-boom), or a test's. */
export interface LineSink {
  write(chunk: string): unknown;
  flush?(cb: (err?: Error) => void): void;
  /** Writes what the sink holds before returning (a write it has under way may still be pending). */
  flushSync?(): void;
}

/**
 * The service's log destination: the lines logged during one turn of the event loop are joined and
 * handed on as one write when the turn ends. A busy service logs a line per request, many per turn;
 * handed on one by one, each line cost sonic-boom a copy of everything still waiting to be written
 * (it appends to one string and measures it in bytes each time) and, when nothing was waiting, a
 * write of its own through libuv's thread pool. Lines keep their order, and the ones of the last turn
 * are written when the process exits (a `kill -9` loses what was not written yet).
 */
export class TurnBatchedDestination implements DestinationStream {
  private lines: string[] = [];
  private scheduled = false;

  constructor(
    private readonly sink: LineSink,
    /** Writes a chunk before returning, bypassing the sink: for the lines still waiting when the process exits. */
    private readonly writeSync: (chunk: string) => void,
  ) {}

  write(line: string): void {
    this.lines.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.handOn);
  }

  /**
   * For pino's `logger.flush(cb)`: the lines logged so far are handed on, and `cb` hears when the sink's own
   * flush calls back (sonic-boom without a minLength does so at once, not when its write is done).
   */
  flush(cb?: (err?: Error) => void): void {
    this.handOn();
    if (this.sink.flush) this.sink.flush(cb ?? (() => {}));
    else cb?.();
  }

  private readonly handOn = (): void => {
    const chunk = this.take();
    if (chunk !== undefined) this.sink.write(chunk);
  };

  private take(): string | undefined {
    this.scheduled = false;
    if (this.lines.length === 0) return undefined;
    const chunk = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    return chunk;
  }

  /**
   * For an exiting process: what the sink holds is written, then the lines still waiting, both before
   * this returns. (Handed to an asynchronous sink, they would wait for a thread the exit does not wait for.)
   */
  flushSync(): void {
    const chunk = this.take();
    try {
      this.sink.flushSync?.();
    } catch {
      // A sink that cannot write any more (closed, its reader gone): the lines waiting still get their try.
    }
    if (chunk !== undefined) this.writeSync(chunk);
  }
}

/** Writes all of `text` (a pipe may take part of it at a time); gives up on an error, as an exiting process cannot wait. */
const writeAll = (fd: number, text: string): void => {
  let bytes = Buffer.from(text);
  try {
    while (bytes.length > 0) bytes = bytes.subarray(writeSync(fd, bytes));
  } catch {
    // EAGAIN on a full non-blocking pipe, EPIPE with no reader left: the lines are lost.
  }
};

/**
 * A logger at `level` writing to `dest` (standard output by default, or a file it appends to) through a
 * TurnBatchedDestination over pino's asynchronous destination, as pino writes to standard output by
 * default: a log reader that falls behind makes lines wait in memory, never the service. The file is
 * opened at once, so that lines logged by a process about to exit can still be written.
 */
export const serviceLogger = (level: string, dest: number | string = 1): Logger => {
  const fd = typeof dest === 'number' ? dest : openSync(dest, 'a');
  const destination = new TurnBatchedDestination(pino.destination({ dest: fd, sync: false }), (chunk) => writeAll(fd, chunk));
  process.once('exit', () => destination.flushSync());
  return pino({ level }, destination);
};
