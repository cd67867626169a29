/**
 * An `at` answer finds the answer kept for its state by the state's position, read before anything is
 * loaded or replayed: nearby instants of one state (events to replay after its snapshot) make the
 * answer once and replay nothing after the first; an instant past the next event makes its own.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadAppModel } from '../../src/app/app-model.ts';
import type { RecordedEvent } from '../../src/events/event-store.ts';
import type { DocAccess, Projector } from '../../src/projections/projector.ts';
import { latestSnapshot } from '../../src/projections/reporting/snapshots.ts';
import { AnswerCache } from '../../src/queries/answer-cache.ts';
import { ChangedObjects } from '../../src/queries/changed-objects.ts';
import { LiveInfos } from '../../src/queries/live-infos.ts';
import { LiveRows } from '../../src/queries/live-rows.ts';
import { collectionAnswer, type ReportingDeps } from '../../src/queries/reporting-api.ts';
import { created, TITLE } from '../support/reporting.ts';
import { startTestService } from '../support/service.ts';
import { sleep } from '../support/wait.ts';

const INTERVAL = 3;

test('nearby instants of one state replay nothing after the first; past the next event, the new state', async () => {
  const svc = await startTestService({ SVC_SNAPSHOT_INTERVAL: String(INTERVAL) });
  try {
    const { reads, events } = svc.engines;
    const fold = 'collection:phd_projects';
    const create = (title: string) => created(svc, { type: 'phd:type:project', attributes: { [TITLE]: title } });
    const newest = async () => (await latestSnapshot(reads, fold))?.position ?? 0;
    /**
     * The head once the collection's projection has folded it and taken its snapshots: the runner
     * commits a batch before it snapshots it, and takes one at the batch's last event (the head)
     * when INTERVAL positions have passed since the newest, so only that one can still be coming.
     */
    const settled = async () => {
      const head = await events.headPosition();
      while (((await reads.getCheckpoint(fold))?.position ?? 0) < head) await sleep(5);
      if (head - (await newest()) >= INTERVAL) while ((await newest()) < head) await sleep(5);
      return head;
    };
    for (let i = 0; i < 7; i++) await create(`Project ${i}`);
    let head = await settled();
    // Events to replay after the newest snapshot: one more object where that snapshot is of the whole log.
    if ((await newest()) === head) {
      await create('Project 7');
      head = await settled();
    }
    await sleep(5);
    const instant = Date.now();
    const snapshot = await latestSnapshot(reads, fold, new Date(instant));
    assert.ok(snapshot && snapshot.position < head, `a snapshot before the last event (${snapshot?.position} of ${head})`);
    const model = loadAppModel(svc.config);
    let applied = 0;
    const counted = (f: Projector): Projector => ({ ...f, apply: (e: RecordedEvent, d: DocAccess) => (applied++, f.apply(e, d)) });
    const changes = new ChangedObjects(events);
    const deps: ReportingDeps = {
      reads,
      events,
      schema: model.schema,
      collections: model.collections,
      folds: new Map([...model.folds].map(([name, f]) => [name, counted(f)])),
      parsedSnapshots: new Map(),
      liveInfos: new LiveInfos(reads, changes, 1 << 24),
      liveRows: new LiveRows(reads, changes, 1 << 24),
      answers: new AnswerCache(1 << 26),
      versionOf: () => 0,
      clock: Date.now,
      statusOf: async () => ({ state: 'live', lag: 0 }),
    };
    const access = { all: true, labels: new Set<string>() };
    const answer = async (ms: number) => {
      const a = await collectionAnswer(deps, 'phd_projects', new Date(ms), access);
      return { at: a.at, members: Buffer.concat(a.members).toString() };
    };
    const first = await answer(instant);
    const replayed = applied;
    assert.ok(replayed >= 1, `the first answer replayed the events after its snapshot (${replayed})`);
    for (let ms = 1; ms <= 3; ms++) {
      const near = await answer(instant - ms);
      assert.is(near.at, new Date(instant - ms).toISOString());
      assert.is(near.members, first.members);
    }
    assert.is(applied, replayed, 'no replay for the nearby instants');

    // Past the next event, its own state (replayed, or loaded from a snapshot the runner took of it meanwhile).
    await sleep(5);
    await create('Project after');
    await sleep(5);
    const after = await answer(Date.now() - 1);
    assert.ok(after.members.includes('Project after') && !first.members.includes('Project after'));
  } finally {
    await svc.stop();
  }
});

test.run();
