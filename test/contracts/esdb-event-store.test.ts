import { randomUUID } from 'node:crypto';
import { openEsdbEventStore } from '../../src/events/adapters/esdb-event-store.ts';
import { eventStoreContract } from './event-store.contract.ts';

const connectionString = process.env.SVC_TEST_ESDB;

if (!connectionString) {
  console.log(
    'skipped: KurrentDB / EventStoreDB contract suite (no server; set SVC_TEST_ESDB=kurrentdb://admin:changeit@host:2113?tls=false to run it)',
  );
} else {
  // Import needs a server holding no event of its own: a fresh one, named by SVC_TEST_ESDB_EMPTY (it is written to).
  const empty = process.env.SVC_TEST_ESDB_EMPTY;
  const openAt = (url: string) => async () => {
    const store = await openEsdbEventStore(url);
    // A shared server keeps every earlier run's streams: a fresh prefix keeps this run's streams apart.
    return { store, prefix: `test-${randomUUID()}-`, close: () => store.close() };
  };
  eventStoreContract(
    'KurrentDB / EventStoreDB',
    openAt(connectionString),
    empty ? { openEmpty: openAt(empty) } : { noEmptyStore: 'set SVC_TEST_ESDB_EMPTY to a fresh server to run them' },
  ).run();
}
