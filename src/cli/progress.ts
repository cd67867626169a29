import type { RebuildProgress } from '../projections/rebuild.ts';

/** What the reporter needs of process.stderr (a fake in tests). */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(chunk: string): boolean;
}

/** Redraws a second are plenty for a human and keep a fast rebuild from spending its time on the terminal. */
const REDRAW_MS = 100;
const PLAIN_LINE_MS = 1000;
/** Return to the start of the line and clear it, so a shorter line leaves nothing of a longer one behind. */
const REDRAW = '\r\x1b[2K';

const figures = (p: RebuildProgress) => {
  const done = p.head > 0 ? Math.min(1, p.position / p.head) : 1;
  const eta = p.etaSeconds === null ? '?' : `${p.etaSeconds}s`;
  return { done, percent: `${(done * 100).toFixed(1)}%`, counts: `${p.processed.toLocaleString('en')} events ${p.eventsPerSecond.toLocaleString('en')} ev/s ETA ${eta}` };
};

/**
 * Cut to the width: a line as wide as the terminal already wraps on some terminals, after which `\r`
 * returns only to the start of the wrapped part and every redraw stacks another line.
 */
const fit = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`);

const barLine = (p: RebuildProgress, columns: number) => {
  const { done, percent, counts } = figures(p);
  const size = Math.max(10, Math.min(30, Math.floor(columns / 4)));
  const filled = Math.round(done * size);
  // The projection names come last: with "all" they are the part that may be cut.
  return fit(`[${'#'.repeat(filled)}${'.'.repeat(size - filled)}] ${percent.padStart(6)} ${p.phase} ${counts} ${p.projection}`, columns - 1);
};

const plainLine = (p: RebuildProgress) => {
  const { percent, counts } = figures(p);
  return `${p.projection} ${percent} ${counts} ${p.phase}\n`;
};

/** A one-line progress bar redrawn in place on a terminal; plain lines (at most one a second) anywhere else. */
export const progressReporter = (out: ProgressStream = process.stderr, now: () => number = Date.now) => {
  let lastDrawn = -Infinity;
  return (p: RebuildProgress) => {
    const final = p.phase === 'done' || p.phase === 'interrupted';
    const at = now();
    if (p.phase === 'building' && at - lastDrawn < (out.isTTY ? REDRAW_MS : PLAIN_LINE_MS)) return;
    lastDrawn = at;
    if (!out.isTTY) {
      out.write(plainLine(p));
      return;
    }
    // Read each time: the terminal may have been resized since.
    const columns = out.columns && out.columns > 0 ? out.columns : 80;
    out.write(`${REDRAW}${barLine(p, columns)}${final ? '\n' : ''}`);
  };
};
