import { loadAppModel, type AppModel } from '../app/app-model.ts';
import { loadConfig, type Config } from '../config/config.ts';
import { openEngines, type Engines } from '../app/engines.ts';
import type { Projector } from '../projections/projector.ts';
import { rebuildsSpec } from '../projections/rebuild.ts';
import type { ReportingDeps } from '../queries/reporting-api.ts';
import { storedProjectionStatus } from './projection-status.ts';
import { LiveInfos } from '../queries/live-infos.ts';
import { LiveRows } from '../queries/live-rows.ts';
import { LiveMembers } from '../queries/live-members.ts';
import { ChangedObjects } from '../queries/changed-objects.ts';
import { snapshotSpec, type ParsedSnapshots } from '../projections/reporting/snapshots.ts';

/** The configured engines and domain, as the service would open them, for one CLI command. */
export interface CliContext extends AppModel {
  readonly config: Config;
  readonly engines: Engines;
  projector(name: string): Projector;
  /** Projector names for `<name|all>` arguments. */
  select(name: string): Projector[];
  reporting(): ReportingDeps;
  close(): Promise<void>;
}

export class UsageError extends Error {}

export const openCli = async (): Promise<CliContext> => {
  const config = loadConfig();
  const model = loadAppModel(config);
  const engines = await openEngines(config);
  const parsedSnapshots: ParsedSnapshots = new Map();
  await engines.reads.ensureCollection(snapshotSpec);
  await engines.reads.ensureCollection(rebuildsSpec);
  for (const p of model.projectors) for (const spec of p.collections) await engines.reads.ensureCollection(spec);
  const projector = (name: string) => {
    const p = model.projectors.find((x) => x.name === name || x.name === `collection:${name}`);
    if (!p) throw new UsageError(`Unknown projection ${name}; known: ${model.projectors.map((x) => x.name).join(', ')}`);
    return p;
  };
  return {
    ...model,
    config,
    engines,
    projector,
    select: (name) => (name === 'all' ? [...model.projectors] : [projector(name)]),
    reporting: () => {
      const changes = new ChangedObjects(engines.events);
      return {
        reads: engines.reads,
        events: engines.events,
        schema: model.schema,
        collections: model.collections,
        folds: model.folds,
        parsedSnapshots,
        liveInfos: new LiveInfos(engines.reads, changes, config.reporting.objectsCacheBytes),
        liveRows: new LiveRows(engines.reads, changes, config.reporting.objectsCacheBytes),
        liveMembers: new LiveMembers(config.reporting.objectsCacheBytes),
        clock: Date.now,
        statusOf: async (name) => (await storedProjectionStatus(engines.events, engines.reads, model.projectors.filter((p) => p.name === name)))[0],
      };
    },
    close: () => engines.close(),
  };
};
