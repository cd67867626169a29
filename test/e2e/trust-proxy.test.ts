/**
 * SVC_TRUST_PROXY over HTTP, seen through the auth-failure throttle (which counts per client
 * address): off, X-Forwarded-For is never believed, so one address's failures block every
 * "forwarded" client; on, each forwarded client is counted on its own and a forged left part of the
 * header changes nothing.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { basic, call, createObject, createReader, expectError, ManualClock, type Reader } from '../support/fixtures.ts';

const WRONG = basic('W'.repeat(44));

interface Setup {
  svc: TestService;
  reader: Reader;
  path: string;
}

const setUp = async (env: Record<string, string>): Promise<Setup> => {
  const clock = new ManualClock(Date.parse('2024-10-01T09:00:00.000Z'));
  const svc = await startTestService(env, clock.fn);
  const reader = await createReader(svc, { readAll: true });
  const { ref } = await createObject(svc, 'phd:type:project', { 'dc:attribute:title': 'Forwarded' });
  return { svc, reader, path: `/api/v0-object/ref/${ref}?sources=NONE` };
};

const get = (s: Setup, authorization: string, forwardedFor?: string) =>
  call(s.svc, s.path, { admin: false, headers: { Authorization: authorization, ...(forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {}) } });

const failTenTimes = async (s: Setup, forwardedFor: string) => {
  for (let i = 0; i < 10; i++) expectError(await get(s, WRONG, forwardedFor), 403, 'svc:auth:invalid-api-key');
};

const test = suite('SVC_TRUST_PROXY and the throttle');

test('off (the default): X-Forwarded-For is ignored; failures count against the connection\'s address', async () => {
  const s = await setUp({});
  try {
    await failTenTimes(s, '198.51.100.1');
    expectError(await get(s, basic(s.reader.key), '198.51.100.2'), 403, 'svc:auth:throttle');
    expectError(await get(s, basic(s.reader.key)), 403, 'svc:auth:throttle');
  } finally {
    await s.svc.stop();
  }
});

test('a hop count of 1: the right-most entry is the client; what the client wrote left of it is ignored', async () => {
  const s = await setUp({ SVC_TRUST_PROXY: '1' });
  try {
    await failTenTimes(s, '6.6.6.6, 198.51.100.1');
    expectError(await get(s, basic(s.reader.key), '198.51.100.1'), 403, 'svc:auth:throttle');
    expectError(await get(s, basic(s.reader.key), '7.7.7.7, 198.51.100.1'), 403, 'svc:auth:throttle', undefined);
    assert.is((await get(s, basic(s.reader.key), '198.51.100.2')).status, 200, 'another client is not blocked');
    assert.is((await get(s, basic(s.reader.key), '198.51.100.2, 6.6.6.6')).status, 200, 'nor is 6.6.6.6, which was only written by the client');
    assert.is((await get(s, basic(s.reader.key))).status, 200, 'nor the proxy itself');
  } finally {
    await s.svc.stop();
  }
});

test('a list of proxies: trusted hops are skipped; the header is believed only from a listed address', async () => {
  const s = await setUp({ SVC_TRUST_PROXY: '127.0.0.0/8, 10.0.0.0/8' });
  try {
    await failTenTimes(s, '6.6.6.6, 198.51.100.1, 10.0.0.3');
    expectError(await get(s, basic(s.reader.key), '198.51.100.1'), 403, 'svc:auth:throttle');
    assert.is((await get(s, basic(s.reader.key), '198.51.100.2, 10.0.0.3')).status, 200);
    assert.is((await get(s, basic(s.reader.key), '10.0.0.3')).status, 200, 'the proxy chain itself is not blocked');
  } finally {
    await s.svc.stop();
  }
  const untrusted = await setUp({ SVC_TRUST_PROXY: '10.0.0.0/8' });
  try {
    await failTenTimes(untrusted, '198.51.100.1');
    expectError(await get(untrusted, basic(untrusted.reader.key), '198.51.100.2'), 403, 'svc:auth:throttle', undefined);
  } finally {
    await untrusted.svc.stop();
  }
});

test.run();
