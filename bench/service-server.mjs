/**
 * The server process of the HTTP benchmarks: the real service (`startService`, embedded engines)
 * on a loopback port, in its own process so the load generator never shares its event loop.
 *
 * It runs the form of the service BENCH_SERVICE_ROOT names (bench/service-form.ts): the compiled
 * JavaScript of a build (what the container image runs), or with `--import tsx` the TypeScript
 * sources. Configuration comes from the environment exactly as for `npm start` (SVC_DATA_DIR,
 * SVC_ADMIN_TOKEN, SVC_SNAPSHOT_INTERVAL, ...), except that it always listens on 127.0.0.1 and a
 * free port. Request logs go (at SVC_LOG_LEVEL, default info) to BENCH_LOG_FILE, or nowhere: stdout
 * carries only one JSON line `{url, pid, adminToken, startMs, form}` once it listens. Stops on
 * SIGTERM or when stdin closes (so `--cpu-prof` profiles are written on a normal exit).
 */
import { serviceModule } from './service-module.mjs';

const t0 = performance.now();
const { loadConfig } = await serviceModule('src/config/config');
const { startService } = await serviceModule('src/app/service');
const { serviceLogger } = await serviceModule('src/app/log-destination');
const config = loadConfig({ ...process.env, PORT: '0', SVC_HOST: '127.0.0.1' });
// The service's own logger (as `npm start` makes it), to the bench's file instead of standard output.
const logger = serviceLogger(config.logLevel, process.env.BENCH_LOG_FILE ?? '/dev/null');
const service = await startService(config, { logger });
process.stdout.write(`${JSON.stringify({ url: service.url, pid: process.pid, adminToken: service.adminToken, startMs: Math.round(performance.now() - t0), form: serviceModule.form })}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await service.close();
  logger.flush();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop());
process.stdin.resume();
