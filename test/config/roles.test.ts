import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const test = suite('config: roles and projection leases');

test('role all with 10 s leases renewed every third of that by default', () => {
  const config = loadConfig({});
  assert.is(config.role, 'all');
  assert.equal(config.leases, { ttlMs: 10_000, renewMs: 3_333 });
  assert.is(config.checkpointPollMs, 500);
});

test('SVC_ROLE, SVC_LEASE_TTL_MS, SVC_LEASE_RENEW_MS and SVC_CHECKPOINT_POLL_MS are read and checked', () => {
  const config = loadConfig({ SVC_ROLE: 'projector', SVC_LEASE_TTL_MS: '20000', SVC_LEASE_RENEW_MS: '5000', SVC_CHECKPOINT_POLL_MS: '100' });
  assert.is(config.role, 'projector');
  assert.equal(config.leases, { ttlMs: 20_000, renewMs: 5_000 });
  assert.is(config.checkpointPollMs, 100);
  assert.is(loadConfig({ SVC_ROLE: 'api' }).role, 'api');
  for (const env of [{ SVC_ROLE: 'worker' }, { SVC_LEASE_TTL_MS: '10' }, { SVC_LEASE_TTL_MS: '5000', SVC_LEASE_RENEW_MS: '5000' }, { SVC_CHECKPOINT_POLL_MS: '0' }]) {
    try {
      loadConfig(env);
      assert.unreachable(JSON.stringify(env));
    } catch (e) {
      assert.instance(e, ConfigError, JSON.stringify(env));
      assert.match((e as Error).message, Object.keys(env).at(-1)!);
    }
  }
});

test.run();
