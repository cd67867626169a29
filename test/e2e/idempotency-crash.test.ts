/**
 * kill -9 with Idempotency-Keys in flight (issue 13 §6, §8): the real service process is killed
 * while pushes with keys are running, restarted on the same data directory (with a short
 * SVC_IDEMPOTENCY_LEASE_MS), and every key is retried with its body: each answers its first result
 * (replayed) or, where the first run died, is taken over once its lease lapses and runs to success.
 * None stays "in progress"; each user ends with one project, its title applied once.
 *
 * Deterministic: the process is frozen (SIGSTOP) before its log is inspected, and killed only once
 * a key is seen started and not settled; every wait is for a condition, with a generous bound.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { basic, createReader, createUser } from '../support/fixtures.ts';
import { adminObject, defineApi, EXAMPLE_CONTROL, plain, type Api } from '../support/push-data.ts';
import type { TestService } from '../support/service.ts';
import { tempDir } from '../support/tmp.ts';
import { idempotencyStream } from '../../src/commands/idempotency.ts';

const TOKEN = 'crash-test-admin-token-0123456789';
const LEASE_MS = 1500;
/**
 * This test's client address (the process trusts one proxy hop): stray requests from other programs
 * on a shared machine that reach a reused loopback port are counted under 127.0.0.1, so their wrong
 * tokens cannot throttle this test's requests (seen once: a 429 on creating a user).
 */
const CLIENT = '192.0.2.10';

interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** Enough of a TestService for the fixtures (admin calls over HTTP). */
  readonly svc: TestService;
}

const start = async (dataDir: string): Promise<Running> => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', SVC_HOST: '127.0.0.1', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN, SVC_IDEMPOTENCY_LEASE_MS: String(LEASE_MS), SVC_LOG_LEVEL: 'info', SVC_TRUST_PROXY: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`service did not start: ${out} ${err}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
      if (out.length > 100_000) out = out.slice(-10_000);
    });
    child.on('exit', () => reject(new Error(`service exited: ${err}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const svc = {
    url,
    adminToken: TOKEN,
    request: (path: string, { admin = true, headers, ...init }: RequestInit & { admin?: boolean } = {}) =>
      fetch(`${url}${path}`, { ...init, headers: { ...(admin ? { Authorization: `Bearer ${TOKEN}` } : {}), 'X-Forwarded-For': CLIENT, ...(headers as Record<string, string>) } }),
  } as unknown as TestService;
  return { child, exited, svc };
};

type SlotState = 'in flight' | 'completed' | 'released';

/**
 * The state of every Idempotency-Key slot in the log (of the frozen or dead process). Null when
 * SQLite answers SQLITE_PROTOCOL: the process was frozen in the middle of updating the WAL index,
 * and a reader gives up on it after a few tries (look again once it has run on).
 */
const slotStates = (dataDir: string): Map<string, SlotState> | null => {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT stream, type FROM events WHERE stream LIKE 'idempotency-%' ORDER BY position").all() as { stream: string; type: string }[];
    const states = new Map<string, SlotState>();
    for (const r of rows) {
      if (r.type === 'IdempotentRequestCompleted') states.set(r.stream, 'completed');
      else if (r.type === 'IdempotentRequestReleased') states.set(r.stream, 'released');
      else if (states.get(r.stream) !== 'completed') states.set(r.stream, 'in flight');
    }
    return states;
  } catch (e) {
    if (e instanceof Database.SqliteError && e.code === 'SQLITE_PROTOCOL') return null;
    throw e;
  } finally {
    db.close();
  }
};
const count = (states: Map<string, SlotState>, state: SlotState) => [...states.values()].filter((s) => s === state).length;

interface Keyed {
  readonly key: string;
  readonly username: string;
  readonly profileRef: string;
  readonly title: string;
  /** The answer the first request got before the kill, if it got one. */
  first?: { status: number; text: string };
}

const pushKeyed = async (svc: TestService, api: Api, k: Keyed) => {
  const res = await svc.request(`/api/push-data/${api.url}`, {
    admin: false,
    method: 'POST',
    body: JSON.stringify({ username: k.username, title: k.title }),
    headers: { Authorization: basic(api.key), 'Idempotency-Key': k.key },
  });
  return { status: res.status, text: await res.text(), replayed: res.headers.get('idempotent-replayed') === 'true' };
};

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const test = suite('Idempotency-Keys across kill -9');

test('every key in flight at kill -9 answers its first result or re-runs to success after its lease; nothing applied twice', async () => {
  const tmp = tempDir('svc-idem-crash');
  let first: Running | undefined;
  let second: Running | undefined;
  try {
    first = await start(tmp.dir);
    const api = await defineApi(first.svc, EXAMPLE_CONTROL);
    const keyed: Keyed[] = [];
    let atKill = new Map<string, SlotState>();
    // Rounds of concurrent keyed pushes until the process is caught with one in flight.
    for (let round = 0; round < 10 && atKill.size === 0; round++) {
      const batch: Keyed[] = [];
      for (let i = 0; i < 40; i++) {
        const user = await createUser(first.svc, { first: 'Crash', last: `R${round}U${i}` });
        batch.push({ key: `crash-${round}-${i}`, username: user.username, profileRef: user.ref, title: `Title ${round}.${i}` });
      }
      keyed.push(...batch);
      const pending = batch.map((k) =>
        pushKeyed(first!.svc, api, k).then(
          (r) => (k.first = r),
          () => undefined,
        ),
      );
      let settled = false;
      void Promise.all(pending).then(() => (settled = true));
      let killed = false;
      for (let look = 0; look < 2000 && !settled && !killed; look++) {
        first.child.kill('SIGSTOP');
        const states = slotStates(tmp.dir);
        // Killed with some answers stored and some requests running.
        if (states && count(states, 'in flight') >= 3 && count(states, 'completed') >= 3) {
          first.child.kill('SIGKILL');
          killed = true;
        } else {
          first.child.kill('SIGCONT');
          await pause(2);
        }
      }
      await Promise.all(pending);
      if (!killed) continue;
      await first.exited;
      // The log as the dead process left it.
      atKill = slotStates(tmp.dir)!;
    }
    assert.ok(count(atKill, 'in flight') >= 3, 'the process was killed with keys in flight');
    const stateAtKill = (k: Keyed) => atKill.get(idempotencyStream(`push-data:${api.url}`, k.key));

    second = await start(tmp.dir);
    const answers = new Map<string, { status: number; text: string; replayed: boolean }>();
    const inProgressSeen = new Set<string>();
    for (const k of keyed) {
      let reply = await pushKeyed(second.svc, api, k);
      for (let i = 0; i < 600 && reply.status === 409; i++) {
        assert.match(reply.text, 'A request with this Idempotency-Key is still being processed');
        inProgressSeen.add(k.key);
        await pause(100);
        reply = await pushKeyed(second.svc, api, k);
      }
      answers.set(k.key, reply);
    }
    for (const k of keyed) {
      const a = answers.get(k.key)!;
      assert.is(a.status, 200, `${k.key}: ${a.status} ${a.text.slice(0, 300)}`);
      assert.is(JSON.parse(a.text).result, 'success', k.key);
      if (k.first) {
        assert.is(k.first.status, 200, `${k.key} first: ${k.first.text.slice(0, 200)}`);
        assert.ok(a.replayed, `${k.key}: answered before the kill, so replayed`);
        assert.is(a.text, k.first.text, `${k.key}: the first answer, replayed`);
      }
    }
    for (const k of keyed) {
      const state = stateAtKill(k);
      const a = answers.get(k.key)!;
      if (state === 'completed') assert.ok(a.replayed, `${k.key}: answered before the kill, replayed`);
      else assert.not.ok(a.replayed, `${k.key} (${state ?? 'never started'}): ran again`);
      if (state !== 'in flight') assert.not.ok(inProgressSeen.has(k.key), `${k.key}: only keys in flight wait for their lease`);
    }

    // Nothing applied twice: one project per user, created once, with its title.
    const reader = await createReader(second.svc, { readAll: true });
    for (const k of keyed) {
      const linked = await reader.get(`/api/v0-object/linked/${k.profileRef}?type=phd:type:project`);
      assert.is(linked.status, 200, JSON.stringify(linked.body));
      assert.is(linked.body.refs.length, 1, `${k.username}: one project (${JSON.stringify(linked.body.refs)})`);
      const project = await adminObject(second.svc, linked.body.refs[0]);
      assert.ok(project, `${k.username}: the project`);
      assert.is(project.recordVersion, 1, `${k.username}: the title applied once`);
      assert.equal(plain(project, 'dc:attribute:title'), [k.title]);
    }
    // And each key now replays what it stored.
    for (const k of keyed.slice(0, 5)) {
      const again = await pushKeyed(second.svc, api, k);
      assert.ok(again.replayed);
      assert.is(again.text, answers.get(k.key)!.text);
    }
  } finally {
    if (first && first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    if (second && second.child.exitCode === null && second.child.signalCode === null) {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    tmp.remove();
  }
});

test.run();
