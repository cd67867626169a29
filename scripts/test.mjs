// Runs every uvu suite under test/ (TypeScript through tsx) and ends with the one summary line CI
// reads: "N passed, N failed", computed from uvu's own totals of this run. With SVC_TEST_TOTALS set (CI, which
// runs the suite on more than one Node), the totals are appended to that file as a JSON line instead and the
// line names the Node, so that scripts/test-totals.mjs prints the one summary line of every run.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

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
  const report = (counts, note = '') => {
    const line = `${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}${note}`;
    if (!process.env.SVC_TEST_TOTALS) return console.log(`\n${line}`);
    appendFileSync(process.env.SVC_TEST_TOTALS, `${JSON.stringify({ node: process.version, ...counts })}\n`);
    console.log(`\nNode ${process.version} run (${line})`);
  };
  if (Number.isNaN(total) || Number.isNaN(passed)) {
    // The run died before uvu could summarise it: count that as one failure, never as a pass.
    report({ passed: 0, failed: 1, skipped: 0 }, ` (test run ended without a summary: exit ${code ?? signal})`);
    process.exit(1);
  }
  const failed = total - passed - (Number.isNaN(skipped) ? 0 : skipped);
  const ok = failed === 0 && code === 0;
  report({ passed, failed: ok ? failed : Math.max(failed, 1), skipped: Number.isNaN(skipped) ? 0 : skipped });
  process.exit(ok ? 0 : 1);
});
