/**
 * The benchmarks' HTTP client survives a server closing an idle keep-alive connection while the
 * client's event loop was busy (the rebuild benchmark reads and parses the whole log in its own
 * thread after the rebuild: 11 s at 2M events, past the service's 5 s keep-alive timeout). The next
 * GET went out on the closed socket and failed with "socket hang up".
 */
import { Agent } from 'node:http';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { httpRequest } from '../../bench/domain-support.ts';

/** A server in a thread of its own (its keep-alive timer must fire while the client's thread is busy), counting requests. */
const SERVER = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
let requests = 0;
const server = createServer((req, res) => res.end('answer ' + ++requests));
server.keepAliveTimeout = 2000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

test('a GET on keep-alive connections the server closed while the client was busy is sent again until it goes out on a new one', async () => {
  const worker = new Worker(SERVER, { eval: true });
  const [port] = (await once(worker, 'message')) as [number];
  const target = { url: `http://127.0.0.1:${port}`, agent: new Agent({ keepAlive: true }) };
  try {
    // Three connections in the pool (the rebuild benchmark's three read loops), all closed by the server below.
    const first = await Promise.all([1, 2, 3].map(() => httpRequest(target, 'GET', '/')));
    assert.equal(first.map((r) => r.text).sort(), ['answer 1', 'answer 2', 'answer 3']);
    // In the pool, then busy past the server's keep-alive timeout (plus the 1 s Node's server adds to it): the
    // socket's close is not seen before the next request takes it. (With the server's hint under 2 s the agent keeps no socket.)
    await new Promise((resolve) => setTimeout(resolve, 10));
    const until = Date.now() + 3500;
    while (Date.now() < until);
    const again = await httpRequest(target, 'GET', '/');
    assert.is(again.status, 200);
    assert.is(again.text, 'answer 4');
  } finally {
    target.agent.destroy();
    await worker.terminate();
  }
});

test.run();
