/**
 * A benchmark process's peak memory is its own: the rebuild benchmark judged the rebuild process on
 * process.resourceUsage().maxRSS, which on Linux starts from the resident set of the process that
 * spawned it (fork copies the high-water mark with the address space and exec keeps it), so a
 * rebuild spawned by a bench process that had generated a 2M-event history reported that process's
 * 660 MB instead of its own 443 MB.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const PARENT_MB = 400;

test(`a child of a ${PARENT_MB} MB process reports its own peak, not the parent's`, () => {
  if (!existsSync('/proc/self/status')) {
    console.log('  (skipped: no /proc here, ownPeakRssMb falls back to maxRSS)');
    return;
  }
  const held = Array.from({ length: PARENT_MB / 10 }, () => Buffer.alloc(10 * 2 ** 20, 1));
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', '-e', "import('./bench/support.ts').then((s) => console.log(JSON.stringify({ own: s.ownPeakRssMb(), maxRss: Math.round(process.resourceUsage().maxRSS / 1024) })))"],
    { encoding: 'utf8', cwd: new URL('../..', import.meta.url).pathname },
  );
  assert.is(child.status, 0, child.stderr);
  const { own, maxRss } = JSON.parse(child.stdout) as { own: number; maxRss: number };
  assert.ok(held.length > 0);
  // What the bench used to report: the parent's size.
  assert.ok(maxRss >= PARENT_MB, `maxRSS of the child: ${maxRss} MB`);
  assert.ok(own < PARENT_MB / 2, `the child's own peak: ${own} MB`);
});

test.run();
