import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { startService, type Service } from '../../src/app/service.ts';
import { tempDir } from './tmp.ts';

export interface TestService extends Service {
  /** The configuration the service started with. */
  readonly config: Config;
  /** The service's data directory (its embedded databases). */
  readonly dataDir: string;
  /** fetch against the service, with the admin token unless `admin: false`. */
  request(path: string, init?: RequestInit & { admin?: boolean }): Promise<Response>;
  stop(): Promise<void>;
}

/** A real service on a loopback port over embedded engines in a fresh data directory. */
export const startTestService = async (env: Record<string, string> = {}, clock?: () => number): Promise<TestService> => {
  const tmp = tempDir('svc-e2e');
  const config = loadConfig({ PORT: '0', SVC_HOST: '127.0.0.1', SVC_DATA_DIR: tmp.dir, SVC_ADMIN_TOKEN: 'test-admin-token-0123456789', ...env });
  const service = await startService(config, { logger: pino({ level: 'silent' }), ...(clock ? { clock } : {}) });
  return {
    ...service,
    config,
    dataDir: config.dataDir,
    request: (path, { admin = true, headers, ...init } = {}) =>
      fetch(`${service.url}${path}`, {
        ...init,
        headers: { ...(admin ? { Authorization: `Bearer ${service.adminToken}` } : {}), ...(headers as Record<string, string>) },
      }),
    stop: async () => {
      await service.close();
      tmp.remove();
    },
  };
};
