/** Reads of the REST API definitions (the push-data endpoints) for the admin pages. */
import { REST_APIS, type RestApiDoc } from '../projections/read-models.ts';
import type { ReadStore } from '../projections/read-store.ts';

/** One definition, or null when there is none at that URL. */
export const findRestApi = (reads: ReadStore, url: string): Promise<RestApiDoc | null> => reads.get<RestApiDoc>(REST_APIS, url);
