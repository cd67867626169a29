/**
 * SVC_TRUST_PROXY: which address a request is counted under (the auth-failure throttle, the log).
 * Off, X-Forwarded-For is never believed; with a hop count, the entry that many places from the
 * right; with a list of proxies, only on connections from them, the right-most untrusted entry.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { parseTrustProxy } from '../../src/config/trust-proxy.ts';
import { clientAddressOf } from '../../src/http/client-address.ts';

const test = suite('Client address and SVC_TRUST_PROXY');

test('the setting: off by default, a hop count, or a list of addresses and CIDR ranges; anything else refused', () => {
  assert.equal(loadConfig({}).trustProxy, { kind: 'off' });
  assert.equal(loadConfig({ SVC_TRUST_PROXY: '0' }).trustProxy, { kind: 'off' });
  assert.equal(loadConfig({ SVC_TRUST_PROXY: '2' }).trustProxy, { kind: 'hops', hops: 2 });
  assert.equal(loadConfig({ SVC_TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,fd00::/8' }).trustProxy, {
    kind: 'addresses',
    addresses: ['10.0.0.0/8', '192.168.1.7', 'fd00::/8'],
  });
  for (const bad of ['true', '33', '10.0.0.0/33', 'proxy.example.org', '10.0.0.1,', 'fd00::/129']) {
    assert.is(parseTrustProxy(bad), undefined, bad);
    try {
      loadConfig({ SVC_TRUST_PROXY: bad });
      assert.unreachable(`accepted ${bad}`);
    } catch (e) {
      assert.instance(e, ConfigError);
      assert.match((e as Error).message, 'SVC_TRUST_PROXY must be a proxy hop count');
      assert.not.match((e as Error).message, bad, 'the value is not echoed');
    }
  }
});

test('off: the peer address, whatever X-Forwarded-For says', () => {
  const of = clientAddressOf({ kind: 'off' });
  assert.is(of('10.0.0.5', '1.2.3.4'), '10.0.0.5');
  assert.is(of('::ffff:10.0.0.5', undefined), '10.0.0.5', 'IPv4-mapped addresses as IPv4');
  assert.is(of('::1', '1.2.3.4'), '::1');
});

test('a hop count: the entry that many places from the right; a forged left part changes nothing', () => {
  const one = clientAddressOf({ kind: 'hops', hops: 1 });
  assert.is(one('10.0.0.5', '203.0.113.9'), '203.0.113.9');
  assert.is(one('10.0.0.5', '6.6.6.6, 203.0.113.9'), '203.0.113.9', 'the client wrote 6.6.6.6 itself');
  assert.is(one('10.0.0.5', undefined), '10.0.0.5', 'no header: the peer');
  assert.is(one('10.0.0.5', 'garbage'), '10.0.0.5', 'not an address: the peer');
  assert.is(one('10.0.0.5', '[2001:db8::1]:4711'), '2001:db8::1');
  assert.is(one('10.0.0.5', '203.0.113.9:4711'), '203.0.113.9');
  const two = clientAddressOf({ kind: 'hops', hops: 2 });
  assert.is(two('10.0.0.5', '6.6.6.6, 203.0.113.9, 10.0.0.4'), '203.0.113.9');
  assert.is(two('10.0.0.5', '203.0.113.9'), '203.0.113.9', 'fewer entries than hops: the left-most');
});

test('a list of proxies: believed only from them; the right-most entry that is not a proxy', () => {
  const of = clientAddressOf({ kind: 'addresses', addresses: ['10.0.0.0/8', '192.168.1.7', 'fd00::/8'] });
  assert.is(of('10.1.2.3', '203.0.113.9'), '203.0.113.9');
  assert.is(of('::ffff:10.1.2.3', '6.6.6.6, 203.0.113.9, 192.168.1.7'), '203.0.113.9', 'skips trusted hops, ignores the forged left part');
  assert.is(of('fd00::1', '2001:db8::7'), '2001:db8::7');
  assert.is(of('203.0.113.50', '1.2.3.4'), '203.0.113.50', 'a connection not from a proxy: the header is ignored');
  assert.is(of('10.1.2.3', '10.0.0.9, 192.168.1.7'), '10.0.0.9', 'only proxies: the left-most');
  assert.is(of('10.1.2.3', undefined), '10.1.2.3');
  assert.is(of('10.1.2.3', 'junk, 203.0.113.9'), '203.0.113.9');
  assert.is(of('10.1.2.3', '203.0.113.9, junk'), '10.1.2.3', 'a proxy that wrote no address: the last address known true');
});

test.run();
