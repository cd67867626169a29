import { join } from 'node:path';
import type { Config } from '../config/config.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { openDiskBlobStore } from '../blobs/adapters/disk-blob-store.ts';

/**
 * The blob store that goes with the configured engines: GridFS when the read models are on MongoDB
 * (its client loads only then), otherwise files under `<SVC_DATA_DIR>/files`.
 */
export const openBlobStore = async (config: Pick<Config, 'dataDir' | 'readStore'>): Promise<BlobStore> =>
  config.readStore.engine === 'mongodb'
    ? (await import('../blobs/adapters/gridfs-blob-store.ts')).openGridFsBlobStore(config.readStore.url)
    : openDiskBlobStore(join(config.dataDir, 'files'));
