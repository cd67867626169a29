// Runs every uvu suite under test/ (TypeScript through tsx) and ends with the one summary line CI
// reads: "N passed, N failed", computed from uvu's own totals of this run.
import { spawn } from 'node:child_process';

const pattern = process.argv[2] ?? '\\.test\\.ts$';
const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', pattern], {
  env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
child.stdout.on('data', (chunk) => {
  out += chunk;
  process.stdout.write(chunk);
});
child.on('close', (code, signal) => {
  const num = (label) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(out)?.[1] ?? NaN);
  const total = num('Total');
  const passed = num('Passed');
  const skipped = num('Skipped');
  if (Number.isNaN(total) || Number.isNaN(passed)) {
    // The run died before uvu could summarise it: count that as one failure, never as a pass.
    console.log(`\n0 passed, 1 failed (test run ended without a summary: exit ${code ?? signal})`);
    process.exit(1);
  }
  const failed = total - passed - (Number.isNaN(skipped) ? 0 : skipped);
  const ok = failed === 0 && code === 0;
  console.log(`\n${passed} passed, ${ok ? failed : Math.max(failed, 1)} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(ok ? 0 : 1);
});
