import { Readable } from 'node:stream';
import type { Slices } from '../queries/answer-cache.ts';

/** Bytes written to a response between two turns of the event loop. */
const TURN_BYTES = 64 * 1024;

/**
 * A long body (a collection-data answer is megabytes) as a stream that gives the event loop back
 * after each TURN_BYTES: a socket that takes all of it at once would otherwise copy it in one turn,
 * and the short requests arriving meanwhile would wait for every byte of it.
 */
export const pacedBody = (slices: Slices, turnBytes = TURN_BYTES): Readable =>
  Readable.from(
    (async function* () {
      let sent = 0;
      for (const slice of slices) {
        yield slice;
        if ((sent += slice.length) >= turnBytes) {
          sent = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    })(),
  );
