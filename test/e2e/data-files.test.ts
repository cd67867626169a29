/**
 * The data directory and what the service keeps in it are its owner's only: the directory 0700
 * (made so, or tightened when it already exists), the databases with their -wal/-shm files, the
 * admin token, the download secret and stored files 0600; also when an older version left them
 * readable by others. Upload temporary files a killed process left behind are removed at start.
 */
import { chmodSync, existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('data files');

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** A service whose data directory is `dir` (the download secret generated there; the admin token read from there when `tokenFile`). */
const startIn = (dir: string, tokenFile = false): Promise<TestService> => startTestService({ SVC_DATA_DIR: dir, ...(tokenFile ? { SVC_ADMIN_TOKEN: '' } : {}) });

const expectPrivate = (svc: TestService, dir: string) => {
  assert.is(modeOf(dir), 0o700, 'the data directory');
  for (const name of ['events.db', 'events.db-wal', 'events.db-shm', 'read.db', 'read.db-wal', 'read.db-shm', 'download-secret']) {
    const path = join(dir, name);
    assert.ok(existsSync(path), `${name} exists`);
    assert.is(modeOf(path), 0o600, name);
  }
  assert.is(svc.dataDir, dir);
};

test('a new data directory is made 0700 and every file in it 0600', async () => {
  const tmp = tempDir('svc-data-files');
  const dir = join(tmp.dir, 'data');
  const previous = process.umask(0o022);
  let svc: TestService | undefined;
  try {
    svc = await startIn(dir);
    const created = await svc.request('/api/admin/objects', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'svc:type:person', attributes: { 'dc:attribute:title': 'Private' } }),
    });
    assert.is(created.status, 201);
    const uploaded = await svc.request('/api/admin/files?filename=a.txt', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'private bytes' });
    assert.is(uploaded.status, 201);
    const { digest } = (await uploaded.json()) as { digest: string };
    expectPrivate(svc, dir);
    assert.is(modeOf(join(dir, 'files', digest.slice(0, 2), digest.slice(2, 4), digest)), 0o600, 'a stored file');
  } finally {
    process.umask(previous);
    await svc?.close();
    tmp.remove();
  }
});

test('an existing data directory and files readable by others are tightened at start', async () => {
  const tmp = tempDir('svc-data-files');
  const dir = join(tmp.dir, 'data');
  let svc: TestService | undefined;
  try {
    // A first start makes the files; then they are loosened as an older version would have left them.
    await (await startIn(dir)).close();
    chmodSync(dir, 0o755);
    for (const name of ['events.db', 'read.db', 'download-secret']) chmodSync(join(dir, name), 0o644);
    for (const name of ['events.db-wal', 'read.db-shm']) if (existsSync(join(dir, name))) chmodSync(join(dir, name), 0o644);
    writeFileSync(join(dir, 'admin-token'), 'an-admin-token-from-an-older-start\n', { mode: 0o644 });
    chmodSync(join(dir, 'admin-token'), 0o644);
    svc = await startIn(dir, true);
    assert.is(svc.adminToken, 'an-admin-token-from-an-older-start');
    expectPrivate(svc, dir);
    assert.is(modeOf(join(dir, 'admin-token')), 0o600, 'admin-token');
  } finally {
    await svc?.close();
    tmp.remove();
  }
});

test('upload temporary files untouched for over an hour are removed at start; younger ones are kept', async () => {
  const tmp = tempDir('svc-data-files');
  const dir = join(tmp.dir, 'data');
  const temps = join(dir, 'files', 'tmp');
  mkdirSync(temps, { recursive: true, mode: 0o700 });
  const orphan = join(temps, 'killed-mid-upload');
  const young = join(temps, 'another-process-uploading');
  writeFileSync(orphan, Buffer.alloc(1024));
  writeFileSync(young, Buffer.alloc(1024));
  const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000;
  utimesSync(orphan, twoHoursAgo, twoHoursAgo);
  const svc = await startIn(dir);
  try {
    assert.is(existsSync(orphan), false, 'the orphan is removed');
    assert.is(existsSync(young), true, 'a temporary file that may belong to a live upload is kept');
  } finally {
    await svc.close();
    tmp.remove();
  }
});

test.run();
