import type { DocText, ReadStore } from './read-store.ts';

/**
 * Every document of a collection in id order, as the JSON text the store holds, read and yielded a
 * page at a time: a snapshot of a fold larger than memory is written while it is read, never held
 * whole, and its documents are copied on without being parsed and encoded again.
 */
export async function* pagedDocs(reads: ReadStore, collection: string, pageSize = 2000): AsyncGenerator<DocText[]> {
  let after: string | undefined;
  for (;;) {
    const page = await reads.findJson(collection, { ...(after === undefined ? {} : { where: { id: { $gt: after } } }), sort: [['id', 'asc']], limit: pageSize });
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
    after = page[page.length - 1]![0];
  }
}
