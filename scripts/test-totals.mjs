// CI's closing line over several runs of scripts/test.mjs (one per Node line): reads the JSON lines they appended
// to the file SVC_TEST_TOTALS named and prints one "N passed, N failed" line for all of them. A run that left no
// line (Node could not be fetched, the native module not built, the runner killed) counts as one failure.
//   node scripts/test-totals.mjs <file> <runs expected>
import { existsSync, readFileSync } from 'node:fs';

const [file, expectedArg] = process.argv.slice(2);
const expected = Number(expectedArg);
const runs = existsSync(file)
  ? readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line))
  : [];
const sum = (key) => runs.reduce((n, run) => n + run[key], 0);
const missing = Math.max(0, expected - runs.length);
const passed = sum('passed');
const failed = sum('failed') + missing;
const skipped = sum('skipped');
console.log(`\n(${runs.map((r) => `Node ${r.node}: ${r.passed} passed, ${r.failed} failed`).join('; ') || 'no run finished'}${missing ? `; ${missing} run(s) ended without totals` : ''})`);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed === 0 && runs.length > 0 ? 0 : 1);
