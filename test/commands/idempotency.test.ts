/**
 * onceByKey (Idempotency-Key slots in the event log): errors and server-side answers release the
 * key, so a retry runs again instead of replaying them; a key whose request died (its lease lapsed)
 * is taken over by one retry and run again; a live request renews its lease however long it runs.
 * Over the embedded event store, as a process that died would have left it.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { idempotencyStream, onceByKey, type StoredResponse } from '../../src/commands/idempotency.ts';
import type { CommandDeps } from '../../src/commands/context.ts';
import { toNewEvents } from '../../src/commands/appending/run-command.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { openSqliteEventStore, type SqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { domainCodecs } from '../../src/events/codecs.ts';
import { eventDecoder } from '../../src/events/decode.ts';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import type { ReadStore } from '../../src/projections/read-store.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { tempDir } from '../support/tmp.ts';

interface Ctx {
  tmp: { dir: string; remove(): void };
  events: SqliteEventStore;
  reads: ReadStore;
  deps: (leaseMs: number) => CommandDeps;
}
const test = suite<Ctx>('Idempotency-Key slots: release, lease, take-over', {} as Ctx);

test.before((ctx) => {
  ctx.tmp = tempDir('svc-idem');
  ctx.events = openSqliteEventStore(join(ctx.tmp.dir, 'events.db'));
  ctx.reads = openSqliteReadStore(join(ctx.tmp.dir, 'read.db'));
  const runner = new ProjectionRunner({ events: ctx.events, reads: ctx.reads, projectors: [] });
  ctx.deps = (idempotencyLeaseMs) =>
    ({ events: ctx.events, reads: ctx.reads, decode: eventDecoder(domainCodecs), runner, waitTimeoutMs: 2000, logger: pino({ level: 'silent' }), idempotencyLeaseMs }) as unknown as CommandDeps;
});
test.after(async (ctx) => {
  await ctx.events?.close();
  await ctx.reads?.close();
  ctx.tmp?.remove();
});

const META = { correlationId: 'test', actor: 'test' };
const BODY = Buffer.from('{"title":"x"}');
const ok = (text: string): StoredResponse => ({ status: 200, contentType: 'application/json', body: text });

const bodyHash = (body: Buffer) => createHash('sha256').update(body).digest('hex');
const stream = (key: string) => idempotencyStream('s', key);
const keyed = (deps: CommandDeps, key: string, run: () => Promise<StoredResponse>, body = BODY) => onceByKey(deps, META, 's', key, body, run);

const slotEvents = async (ctx: Ctx, key: string) => {
  const types: string[] = [];
  for await (const e of ctx.events.readStream(stream(key))) types.push(e.type);
  return types;
};
/** What a process killed mid-request leaves: a start, never settled (and, being dead, never renewed). */
const startedByDeadProcess = (ctx: Ctx, key: string, leaseUntil?: number) =>
  ctx.events.append(
    stream(key),
    toNewEvents([{ type: 'IdempotentRequestStarted', data: { bodyHash: bodyHash(BODY), ...(leaseUntil !== undefined ? { leaseUntil: new Date(leaseUntil).toISOString() } : {}) } }], META),
    'no_stream',
  );
const until = async (check: () => Promise<boolean> | boolean, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.unreachable(`timed out waiting: ${what}`);
};

const rejectsWith = async (p: Promise<unknown>, kind: string) => {
  try {
    await p;
  } catch (e) {
    assert.instance(e, DomainError);
    assert.is((e as DomainError).kind, kind);
    return;
  }
  assert.unreachable(`expected ${kind}`);
};

test('a thrown error (e.g. busy: contention past the time bound) releases the key: the retry runs again, then replays', async (ctx) => {
  const deps = ctx.deps(30_000);
  let runs = 0;
  const busy = new Error('busy, retry later');
  try {
    await keyed(deps, 'k-error', async () => {
      runs++;
      throw busy;
    });
    assert.unreachable('the error reaches the caller');
  } catch (e) {
    assert.is(e, busy);
  }
  assert.equal(await keyed(deps, 'k-error', async () => (runs++, ok('second'))), ok('second'), 'ran again, not a replay of the error');
  assert.equal(await keyed(deps, 'k-error', async () => (runs++, ok('third'))), { ...ok('second'), replayed: true });
  assert.is(runs, 2);
  assert.equal(await slotEvents(ctx, 'k-error'), ['IdempotentRequestStarted', 'IdempotentRequestReleased', 'IdempotentRequestStarted', 'IdempotentRequestCompleted']);
});

test('a 5xx answer (busy, rendered) is answered but not stored: the retry runs again', async (ctx) => {
  const deps = ctx.deps(30_000);
  const busy = { status: 503, contentType: 'application/json', body: '{"result":"error"}' };
  assert.equal(await keyed(deps, 'k-503', async () => busy), busy);
  assert.equal(await keyed(deps, 'k-503', async () => ok('done')), ok('done'));
  assert.equal(await keyed(deps, 'k-503', async () => ok('again')), { ...ok('done'), replayed: true });
});

test('a key whose lease lapsed (its process died) is taken over by a retry and run again; within the lease it is in progress', async (ctx) => {
  const leaseUntil = Date.now() + 400;
  await startedByDeadProcess(ctx, 'k-dead', leaseUntil);
  const deps = ctx.deps(30_000);
  await rejectsWith(keyed(deps, 'k-dead', async () => ok('too early')), 'svc:api:idempotency-in-progress');
  await until(() => Date.now() > leaseUntil, 'the lease to lapse');
  assert.equal(await keyed(deps, 'k-dead', async () => ok('re-run')), ok('re-run'));
  assert.equal(await keyed(deps, 'k-dead', async () => ok('never')), { ...ok('re-run'), replayed: true });
  await rejectsWith(keyed(deps, 'k-dead', async () => ok('x'), Buffer.from('another body')), 'svc:api:idempotency-key-reused');
  assert.equal(await slotEvents(ctx, 'k-dead'), ['IdempotentRequestStarted', 'IdempotentRequestStarted', 'IdempotentRequestCompleted']);
});

test('a start written before leases existed is held for one lease from when it was recorded, then taken over', async (ctx) => {
  await startedByDeadProcess(ctx, 'k-legacy');
  const deps = ctx.deps(600);
  await rejectsWith(keyed(deps, 'k-legacy', async () => ok('early')), 'svc:api:idempotency-in-progress');
  let answer: StoredResponse | undefined;
  await until(async () => (answer = await keyed(deps, 'k-legacy', async () => ok('taken over')).catch(() => undefined)) !== undefined, 'the take-over');
  assert.equal(answer, ok('taken over'));
});

test('two retries after a lapsed lease: one takes over and runs, the other is told the key is in progress', async (ctx) => {
  await startedByDeadProcess(ctx, 'k-race', Date.now() - 1);
  const deps = ctx.deps(30_000);
  let runs = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const attempt = () => keyed(deps, 'k-race', async () => (runs++, await gate, ok('winner'))).then((r) => ({ r }), (e: unknown) => ({ e }));
  const both = Promise.all([attempt(), attempt()]);
  await until(() => runs > 0, 'one run to start');
  release();
  const results = await both;
  assert.is(runs, 1, 'only one ran');
  const won = results.flatMap((x) => ('r' in x ? [x.r] : []));
  const lost = results.flatMap((x) => ('e' in x ? [x.e] : []));
  assert.equal(won, [ok('winner')]);
  assert.is(lost.length, 1);
  assert.is((lost[0] as DomainError).kind, 'svc:api:idempotency-in-progress');
});

test('a live request renews its lease: past its first lease a retry is still told "in progress" and nothing runs twice', async (ctx) => {
  const leaseMs = 900;
  const deps = ctx.deps(leaseMs);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let runs = 0;
  const started = Date.now();
  const first = keyed(deps, 'k-live', async () => (runs++, await gate, ok('first')));
  // Conditions, not a time: two renewals in the log and the first lease over.
  await until(async () => (await slotEvents(ctx, 'k-live')).filter((t) => t === 'IdempotentRequestRenewed').length >= 2 && Date.now() > started + leaseMs, 'renewals');
  await rejectsWith(keyed(deps, 'k-live', async () => (runs++, ok('second'))), 'svc:api:idempotency-in-progress');
  release();
  assert.equal(await first, ok('first'));
  assert.equal(await keyed(deps, 'k-live', async () => (runs++, ok('third'))), { ...ok('first'), replayed: true });
  assert.is(runs, 1);
});

test.run();
