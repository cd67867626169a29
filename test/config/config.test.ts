import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveAdminToken } from '../../src/app/admin-token.ts';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('Configuration');

test('defaults describe the embedded service on port 8080', () => {
  const c = loadConfig({});
  assert.is(c.port, 8080);
  assert.is(c.baseUrl, 'http://localhost:8080');
  assert.equal(c.eventStore, { engine: 'sqlite' });
  assert.equal(c.readStore, { engine: 'sqlite' });
  assert.is(c.bodyLimitBytes, 1024 * 1024);
  assert.ok(c.dataDir.endsWith('/data'));
});

test('the base URL follows PORT unless given; engines follow their URLs', () => {
  assert.is(loadConfig({ PORT: '9000' }).baseUrl, 'http://localhost:9000');
  const c = loadConfig({
    SVC_BASE_URL: 'https://svc.example.org/',
    SVC_EVENT_STORE: 'kurrentdb://db1:2113?tls=false',
    SVC_READ_STORE: 'mongodb://db2:27017/svc?replicaSet=rs0',
    SVC_BODY_LIMIT: '2mb',
  });
  assert.is(c.baseUrl, 'https://svc.example.org');
  assert.equal(c.eventStore, { engine: 'esdb', url: 'kurrentdb://db1:2113?tls=false' });
  assert.equal(c.readStore, { engine: 'mongodb', url: 'mongodb://db2:27017/svc?replicaSet=rs0' });
  assert.is(c.bodyLimitBytes, 2 * 1024 * 1024);
});

test('every bad value is reported on its own line, without echoing secrets', () => {
  try {
    loadConfig({
      PORT: 'eighty',
      SVC_BASE_URL: 'ftp://x',
      SVC_ADMIN_TOKEN: 'short-secret',
      SVC_EVENT_STORE: 'postgres://x',
      SVC_READ_STORE: 'redis://x',
      SVC_BODY_LIMIT: '-5',
      SVC_LOG_LEVEL: 'loud',
    });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ConfigError);
    const problems = (e as ConfigError).problems;
    assert.is(problems.length, 7);
    for (const name of ['PORT', 'SVC_BASE_URL', 'SVC_ADMIN_TOKEN', 'SVC_EVENT_STORE', 'SVC_READ_STORE', 'SVC_BODY_LIMIT', 'SVC_LOG_LEVEL']) {
      assert.ok(problems.some((p) => p.startsWith(`${name} must be`)), name);
    }
    assert.not.match((e as Error).message, 'short-secret');
  }
});

test('an admin token with white space is refused with a message that says why', () => {
  try {
    loadConfig({ SVC_ADMIN_TOKEN: 'long enough but has spaces' });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ConfigError);
    assert.match((e as ConfigError).problems[0]!, 'white space');
    assert.not.match((e as Error).message, 'has spaces');
  }
});

test('limits on slow clients: defaults, ranges, and a request timeout no shorter than the headers timeout', () => {
  assert.equal(loadConfig({}).http, { headersTimeoutMs: 20_000, requestTimeoutMs: 300_000, keepAliveTimeoutMs: 5_000 });
  assert.equal(loadConfig({ SVC_HEADERS_TIMEOUT_MS: '1000', SVC_REQUEST_TIMEOUT_MS: '1000', SVC_KEEP_ALIVE_TIMEOUT_MS: '65000' }).http, {
    headersTimeoutMs: 1000,
    requestTimeoutMs: 1000,
    keepAliveTimeoutMs: 65_000,
  });
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (e) {
      assert.instance(e, ConfigError);
      return (e as ConfigError).problems.map((p) => p.split(' ')[0]);
    }
  };
  assert.equal(problems({ SVC_HEADERS_TIMEOUT_MS: '999', SVC_REQUEST_TIMEOUT_MS: '3600001', SVC_KEEP_ALIVE_TIMEOUT_MS: '0' }), [
    'SVC_HEADERS_TIMEOUT_MS',
    'SVC_REQUEST_TIMEOUT_MS',
    'SVC_KEEP_ALIVE_TIMEOUT_MS',
  ]);
  assert.equal(problems({ SVC_HEADERS_TIMEOUT_MS: '30000', SVC_REQUEST_TIMEOUT_MS: '20000' }), ['SVC_REQUEST_TIMEOUT_MS']);
});

test('an unset admin token is generated once, kept with mode 0600, then reused', () => {
  const tmp = tempDir();
  const first = resolveAdminToken(undefined, tmp.dir);
  assert.ok(first.generated);
  assert.ok(first.token.length >= 32);
  const file = join(tmp.dir, 'admin-token');
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.is(readFileSync(file, 'utf8').trim(), first.token);
  const second = resolveAdminToken(undefined, tmp.dir);
  assert.equal(second, { token: first.token, generated: false, file });
  assert.equal(resolveAdminToken('configured-token-123456', tmp.dir), { token: 'configured-token-123456', generated: false });
  tmp.remove();
});

test.run();
