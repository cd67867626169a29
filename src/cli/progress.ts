import type { RebuildProgress } from '../projections/rebuild.ts';

const WIDTH = 30;

const line = (p: RebuildProgress) => {
  const done = p.head > 0 ? Math.min(1, p.position / p.head) : 1;
  const eta = p.etaSeconds === null ? '?' : `${p.etaSeconds}s`;
  return { done, text: `${p.projection} ${(done * 100).toFixed(1)}% ${p.processed.toLocaleString('en')} events ${p.eventsPerSecond.toLocaleString('en')} ev/s ETA ${eta}` };
};

/** A progress bar on a terminal; plain lines (at most one a second) anywhere else. */
export const progressReporter = (out: NodeJS.WriteStream = process.stderr) => {
  let lastPrinted = 0;
  return (p: RebuildProgress) => {
    const { done, text } = line(p);
    if (out.isTTY) {
      const filled = Math.round(done * WIDTH);
      out.write(`\r[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${text} ${p.phase}   `);
      if (p.phase === 'done' || p.phase === 'interrupted') out.write('\n');
      return;
    }
    const now = Date.now();
    if (now - lastPrinted >= 1000 || p.phase !== 'building') {
      out.write(`${text} ${p.phase}\n`);
      lastPrinted = now;
    }
  };
};
