import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openEngines } from '../../src/app/engines.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createUser } from '../support/fixtures.ts';
import { defineApi, EXAMPLE_CONTROL, expectSuccess } from '../support/push-data.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { tempDir } from '../support/tmp.ts';

interface Row {
  name: string;
  state: string;
  checkpoint: number;
  head: number;
  lag: number;
}

const svcCli = (dataDir: string, args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/svc.mjs', ...args], { env: { ...process.env, SVC_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });

const cliRows = async (dataDir: string): Promise<Row[]> => {
  const r = await svcCli(dataDir, ['projections', '--json']);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Row[];
};

const comparable = (rows: Row[]) => rows.map(({ name, state, checkpoint, head, lag }) => ({ name, state, checkpoint, head, lag })).sort((a, b) => a.name.localeCompare(b.name));

const test = suite('svc projections: the admin API definition of lag');

test('after pushes, svc projections --json and GET /api/admin/projections agree for every projection', async () => {
  let svc: TestService | undefined;
  try {
    svc = await startTestService();
    const user = await createUser(svc, {});
    const api = await defineApi(svc, EXAMPLE_CONTROL);
    // Each push ends with an idempotency-key event no projection folds.
    for (let i = 0; i < 3; i++) expectSuccess(await api.push({ username: user.username, title: `Thesis ${i}` }, { 'Idempotency-Key': randomUUID() }));
    const admin = async () => ((await (await svc!.request('/api/admin/projections')).json()) as { projections: Row[] }).projections;
    const head = await svc.engines.events.headPosition();
    // Bounded wait for the admin API to show every projection live at the head (it folds in the background).
    for (let i = 0; i < 500 && !(await admin()).every((p) => p.state === 'live' && p.checkpoint === head); i++) await new Promise((r) => setTimeout(r, 20));
    const before = comparable(await admin());
    assert.ok(before.every((p) => p.state === 'live' && p.lag === 0 && p.head === head), JSON.stringify(before));
    const cli = comparable(await cliRows(svc.dataDir));
    assert.equal(cli, before);
    assert.equal(comparable(await admin()), before);
  } finally {
    await svc?.stop();
  }
});

test('a stored checkpoint followed only by events the projection does not fold is not behind; one followed by a folded event is', async () => {
  const tmp = tempDir('svc-cli');
  const config = loadConfig({ SVC_DATA_DIR: tmp.dir, SVC_ADMIN_TOKEN: 'test-admin-token-0123456789' });
  const engines = await openEngines(config);
  try {
    const created = await engines.events.append('user-ada', [{ type: 'UserCreated', data: { username: 'ada' } }]);
    // A type nobody folds, as the idempotency keys' events: the head moves, no projection's read model does.
    await engines.events.append('idempotency-x', [{ type: 'IdempotencyKeyReserved', data: {} }]);
    const head = await engines.events.headPosition();
    await engines.reads.commitBatch('users', [], null, { position: created.position });
    await engines.reads.commitBatch('objects', [], null, { position: created.position });
    const rows = await cliRows(tmp.dir);
    for (const name of ['users', 'objects', 'files']) {
      const row = rows.find((r) => r.name === name)!;
      assert.equal({ checkpoint: row.checkpoint, head: row.head, lag: row.lag, state: row.state }, { checkpoint: head, head, lag: 0, state: 'live' }, name);
    }
    // Now one the users projection folds lies past its checkpoint: it is behind by the whole distance.
    await engines.events.append('user-bob', [{ type: 'UserCreated', data: { username: 'bob' } }]);
    const after = await cliRows(tmp.dir);
    const users = after.find((r) => r.name === 'users')!;
    assert.equal({ checkpoint: users.checkpoint, lag: users.lag, state: users.state }, { checkpoint: created.position, lag: head + 1 - created.position, state: 'catching-up' });
    assert.is(after.find((r) => r.name === 'objects')!.lag, 0);
  } finally {
    await engines.close();
    tmp.remove();
  }
});

test.run();
