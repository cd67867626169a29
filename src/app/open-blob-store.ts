import { join } from 'node:path';
import type { Config } from '../config/config.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { openDiskBlobStore } from '../blobs/adapters/disk-blob-store.ts';
import type { Engines } from './engines.ts';

/**
 * The blob store that goes with the opened engines: GridFS on the read store's MongoDB client when
 * the read models are on MongoDB (one client per process; engines.close() closes it), otherwise
 * files under `<SVC_DATA_DIR>/files`.
 */
export const openBlobStore = async (config: Pick<Config, 'dataDir'>, engines: Pick<Engines, 'mongo'>): Promise<BlobStore> =>
  engines.mongo
    ? (await import('../blobs/adapters/gridfs-blob-store.ts')).gridFsBlobStore(engines.mongo.db)
    : openDiskBlobStore(join(config.dataDir, 'files'));
