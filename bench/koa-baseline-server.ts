/**
 * The baseline server of the HTTP benchmarks: a bare koa + @koa/router app (no auth, no store, no
 * logging) in its own process, answering the same JSON as the service does:
 *
 * - `GET /api/v0-object/ref/:ref`: the object read from BENCH_GET_BODY_FILE (parsed once; koa
 *   serialises it on every request, as the service serialises its answer);
 * - `POST /api/push-data/:url`: parses the JSON body with @koa/bodyparser and answers the response
 *   read from BENCH_POST_RESPONSE_FILE, serialised indented by 4 as the push-data API does.
 *
 * Prints one JSON line `{url, pid}` once it listens; stops on SIGTERM or when stdin closes.
 */
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

const readJson = (file: string | undefined): unknown => (file ? JSON.parse(readFileSync(file, 'utf8')) : { success: true });
const getBody = readJson(process.env.BENCH_GET_BODY_FILE);
const postResponse = readJson(process.env.BENCH_POST_RESPONSE_FILE);

const app = new Koa();
const router = new Router();
router.get('/api/v0-object/ref/:ref', (ctx) => {
  ctx.body = getBody;
});
router.post('/api/push-data/:url', bodyParser({ enableTypes: ['json'], jsonStrict: true }), (ctx) => {
  const body = (ctx.request as unknown as { body?: { username?: unknown } }).body;
  if (typeof body?.username !== 'string') ctx.throw(400, 'username expected');
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = `${JSON.stringify(postResponse, null, 4)}\n`;
});
app.use(router.routes()).use(router.allowedMethods());

const server = app.listen(0, '127.0.0.1');
await new Promise<void>((resolve, reject) => {
  server.once('listening', resolve);
  server.once('error', reject);
});
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pid: process.pid })}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
