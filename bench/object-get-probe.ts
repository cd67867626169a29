/**
 * The object GET probe of `reporting`'s mixed load, run as a process of its own: one sequential
 * client timing `GET /api/v0-object/ref/<ref>?sources=NONE` for a while, then one JSON line with
 * the latency summary and the first failures. In the process that also drives the collection-data
 * readers, a GET's reply waits in that process's event loop behind the readers' megabytes of
 * answers: what it then measures is partly its own queue, not the service's (issue 15, target 5).
 *
 * Argument: JSON `{ url, authorization, refs, ms }`.
 */
import { Agent } from 'node:http';
import { latencySummary, timedGet } from './domain-support.ts';

interface ProbeInput {
  readonly url: string;
  readonly authorization: string;
  readonly refs: readonly string[];
  readonly ms: number;
}

const input = JSON.parse(process.argv[2] ?? '{}') as ProbeInput;
const target = { url: input.url, agent: new Agent({ keepAlive: true, maxSockets: 1 }) };
const headers = { Authorization: input.authorization };

const samples: number[] = [];
const failures: string[] = [];
const started = performance.now();
for (let n = 0; performance.now() - started < input.ms; n++) {
  const r = await timedGet(target, `/api/v0-object/ref/${input.refs[n % input.refs.length]}?sources=NONE`, headers);
  if (r.status === 200) samples.push(r.ms);
  else if (failures.length < 5) failures.push(`object GET ${r.status} ${r.text.slice(0, 200)}`);
}
target.agent.destroy();
process.stdout.write(`${JSON.stringify({ latency: latencySummary(samples), failures })}\n`);
