import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const test = suite('Settings of /metrics and /readyz');

const load = (env: Record<string, string>) => loadConfig({ SVC_DATA_DIR: '/tmp/unused', ...env });

test('defaults: /metrics open, lag bound by engine (events embedded, log bytes on EventStoreDB), 2 s timeout', () => {
  assert.equal(load({}).observability, { metricsToken: undefined, readyMaxLag: 1_000, readyTimeoutMs: 2_000 });
  assert.is(load({ SVC_EVENT_STORE: 'esdb://localhost:2113?tls=false' }).observability.readyMaxLag, 1_000_000);
});

test('set values are taken; empty means unset', () => {
  const c = load({ SVC_METRICS_TOKEN: 'a-metrics-token-of-32-characters', SVC_READY_MAX_LAG: '0', SVC_READY_TIMEOUT_MS: '500' });
  assert.equal(c.observability, { metricsToken: 'a-metrics-token-of-32-characters', readyMaxLag: 0, readyTimeoutMs: 500 });
  assert.is(load({ SVC_METRICS_TOKEN: '' }).observability.metricsToken, undefined);
});

test('bad values are refused by name, without echoing the token', () => {
  for (const [name, value] of [
    ['SVC_METRICS_TOKEN', 'short'],
    ['SVC_METRICS_TOKEN', 'has white space in it, 0123456789'],
    ['SVC_READY_MAX_LAG', '-1'],
    ['SVC_READY_MAX_LAG', 'lots'],
    ['SVC_READY_TIMEOUT_MS', '10'],
  ] as const) {
    try {
      load({ [name]: value });
      assert.unreachable(`${name}=${value} accepted`);
    } catch (e) {
      assert.instance(e, ConfigError);
      assert.match((e as Error).message, name);
      if (name === 'SVC_METRICS_TOKEN') assert.not.match((e as Error).message, value);
    }
  }
});

test.run();
