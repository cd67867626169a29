import { ConfigError, loadConfig } from './config/config.ts';
import { startService } from './app/service.ts';

const main = async () => {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const service = await startService(config);
  const shutdown = (signal: string) => {
    process.stderr.write(`${signal}: finishing in-flight requests and flushing projections\n`);
    service.close().then(
      () => process.exit(0),
      (e) => {
        process.stderr.write(`shutdown failed: ${(e as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
};

main().catch((e) => {
  process.stderr.write(`Service failed to start: ${(e as Error).message}\n`);
  process.exit(1);
});
