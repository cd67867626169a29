/**
 * The server process of the `files` benchmark: the service (`startFilesService` of
 * test/e2e/files/support.ts: `src/app/service.ts` on the embedded engines) on a loopback port, in its
 * own process so its resident memory can be measured alone. Prints one JSON line `{url, pid}` once
 * it listens; stops on SIGTERM or when stdin closes.
 */
import { startFilesService } from '../test/e2e/files/support.ts';

const svc = await startFilesService(process.env.BENCH_DATA_DIR ? { env: { SVC_DATA_DIR: process.env.BENCH_DATA_DIR } } : {});
process.stdout.write(`${JSON.stringify({ url: svc.url, pid: process.pid, baseUrl: svc.config.baseUrl, adminToken: svc.adminToken })}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await svc.stop();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop());
process.stdin.resume();
