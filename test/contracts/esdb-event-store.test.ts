import { randomUUID } from 'node:crypto';
import { openEsdbEventStore } from '../../src/events/adapters/esdb-event-store.ts';
import { eventStoreContract } from './event-store.contract.ts';

const connectionString = process.env.SVC_TEST_ESDB;

if (!connectionString) {
  console.log(
    'skipped: KurrentDB / EventStoreDB contract suite (no server; set SVC_TEST_ESDB=kurrentdb://admin:changeit@host:2113?tls=false to run it)',
  );
} else {
  eventStoreContract('KurrentDB / EventStoreDB', async () => {
    const store = await openEsdbEventStore(connectionString);
    // A shared server keeps every earlier run's streams: a fresh prefix keeps this run's streams apart.
    return { store, prefix: `test-${randomUUID()}-`, close: () => store.close() };
  }).run();
}
