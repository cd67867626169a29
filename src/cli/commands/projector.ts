import { startService } from '../../app/service.ts';
import { loadConfig } from '../../config/config.ts';

export const projectorHelp = `svc projector

Runs as a projector process (the same as SVC_ROLE=projector npm start): folds every projection
whose lease it gets and stands by for the others, taking one over when its holder stops or stops
renewing its lease (SVC_LEASE_TTL_MS); runs the rebuilds asked through the admin API. Serves only
GET /healthz and GET /status on PORT. Any number may run against one store; SIGTERM or Ctrl-C
stops it after the batch in progress and hands its leases over at once.`;

export const projector = async (): Promise<number> => {
  const service = await startService({ ...loadConfig(), role: 'projector' });
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await service.close();
  return 0;
};
