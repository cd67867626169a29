import type { Config } from '../config/config.ts';
import { eventDecoder, type EventDecoder } from '../events/decode.ts';
import { domainCodecs } from '../events/codecs.ts';
import { loadModels } from './load-models.ts';
import type { Models } from '../domain/model.ts';
import { allProjectors } from '../projections/all-projectors.ts';
import type { Projector } from '../projections/projector.ts';
import type { CollectionDef } from '../domain/reporting/collection.ts';
import { collectionFold } from '../projections/reporting/collection-fold.ts';
import { loadCollections } from './load-collections.ts';
import { withSnapshots } from '../projections/reporting/snapshots.ts';
import type { Deflate } from '../projections/reporting/snapshot-chunks.ts';
import { loadSchema } from './load-schema.ts';
import type { Schema } from '../domain/schema.ts';

/** Everything configured about the domain: schema, import models, collections and the read models built from them. */
export interface AppModel {
  readonly schema: Schema;
  readonly models: Models;
  readonly collections: readonly CollectionDef[];
  readonly decode: EventDecoder;
  /** The fold of each reporting collection, by collection name. */
  readonly folds: ReadonlyMap<string, Projector>;
  /** Every projector the runner feeds (collection folds with their snapshots). */
  readonly projectors: readonly Projector[];
}

/** How a model's collection folds compress their snapshots (see Deflate): on the thread pool unless said. */
export interface AppModelOptions {
  readonly snapshotDeflate?: Deflate;
}

export const loadAppModel = (config: Config, options: AppModelOptions = {}): AppModel => {
  const schema = loadSchema(config.schemaFile);
  const models = loadModels(config.modelsFile, schema);
  const collections = loadCollections(config.collectionsFile, schema);
  const decode = eventDecoder(domainCodecs);
  const folds = new Map(collections.map((c) => [c.name, collectionFold(c, schema, decode)]));
  const projectors = [...allProjectors(decode), ...[...folds.values()].map((f) => withSnapshots(f, config.snapshotInterval, options.snapshotDeflate))];
  return { schema, models, collections, decode, folds, projectors };
};
