import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DownloadSigner, REPORTED_EARLY_SECONDS, downloadPath, resolveDownloadSecret } from '../../src/blobs/signed-urls.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('signed download URLs');

const DIGEST = 'ab'.repeat(32);
const target = { digest: DIGEST, fileSize: 1234, filename: 'Report 2024 (final) é.pdf' };
const NOW = Date.parse('2026-03-01T12:00:00.250Z');
const signer = (clock = () => NOW, secret = Buffer.alloc(64, 7), validSeconds = 14_400) =>
  new DownloadSigner({ secret, baseUrl: 'https://svc.example.org', validSeconds, clock });

/** The parts of a signed URL as the download endpoint receives them. */
const partsOf = (url: string) => {
  const u = new URL(url);
  const [, , , , digest, fileSize, filename] = u.pathname.split('/');
  return { digest: digest!, fileSize: fileSize!, filename: decodeURIComponent(filename!), e: u.searchParams.get('e') ?? undefined, s: u.searchParams.get('s') ?? undefined };
};

test('a signed URL is absolute under the base URL, expires after the valid period and reports validUntil 16 s early', () => {
  const signed = signer().sign(target);
  const expires = Math.floor(NOW / 1000) + 14_400;
  assert.is(signed.expires, expires);
  assert.ok(signed.url.startsWith(`https://svc.example.org${downloadPath(target)}?e=${expires}&s=`));
  assert.match(signed.url, /&s=[0-9a-f]{64}$/);
  assert.is(signed.validUntil, new Date((expires - REPORTED_EARLY_SECONDS) * 1000).toISOString());
  assert.is(signed.validUntil, '2026-03-01T15:59:44.000Z');
  assert.is(downloadPath(target), `/api/v0-file/download/${DIGEST}/1234/Report%202024%20(final)%20%C3%A9.pdf`);
});

test('the URL verifies as it was issued', () => {
  const s = signer();
  const p = partsOf(s.sign(target).url);
  assert.equal(s.verify(p, p.e, p.s), { ok: true });
});

test('changing any part makes it invalid', () => {
  const s = signer();
  const p = partsOf(s.sign(target).url);
  const flip = (hex: string, i = 0) => hex.slice(0, i) + (hex[i] === '0' ? '1' : '0') + hex.slice(i + 1);
  const cases: [string, Parameters<DownloadSigner['verify']>][] = [
    ['digest', [{ ...p, digest: flip(p.digest, 10) }, p.e, p.s]],
    ['digest in upper case', [{ ...p, digest: p.digest.toUpperCase() }, p.e, p.s]],
    ['size', [{ ...p, fileSize: '1235' }, p.e, p.s]],
    ['size with a leading zero', [{ ...p, fileSize: '01234' }, p.e, p.s]],
    ['filename', [{ ...p, filename: 'Report 2024 (final) e.pdf' }, p.e, p.s]],
    ['expiry moved later', [p, String(Number(p.e) + 3600), p.s]],
    ['expiry missing', [p, undefined, p.s]],
    ['expiry not a number', [p, `${p.e}x`, p.s]],
    ['signature changed', [p, p.e, flip(p.s!, 63)]],
    ['signature missing', [p, p.e, undefined]],
    ['signature truncated', [p, p.e, p.s!.slice(0, 63)]],
    ['signature in upper case', [p, p.e, p.s!.toUpperCase()]],
    ['signature empty', [p, p.e, '']],
  ];
  for (const [what, args] of cases) assert.equal(s.verify(...args), { ok: false, reason: 'invalid' }, what);
});

test('a URL signed with another secret is invalid', () => {
  const p = partsOf(signer(undefined, Buffer.alloc(64, 8)).sign(target).url);
  assert.equal(signer().verify(p, p.e, p.s), { ok: false, reason: 'invalid' });
});

test('expiry follows the (injected) clock: valid until the last second, expired from the expiry on', () => {
  let now = NOW;
  const s = signer(() => now);
  const signed = s.sign(target);
  const p = partsOf(signed.url);
  now = Date.parse(signed.validUntil);
  assert.equal(s.verify(p, p.e, p.s), { ok: true }, 'at validUntil');
  now = signed.expires * 1000 - 1;
  assert.equal(s.verify(p, p.e, p.s), { ok: true }, 'a millisecond before expiry');
  now = signed.expires * 1000;
  assert.equal(s.verify(p, p.e, p.s), { ok: false, reason: 'expired' }, 'at expiry');
  now += 86_400_000;
  assert.equal(s.verify(p, p.e, p.s), { ok: false, reason: 'expired' });
  const tampered = { ...p, fileSize: '1' };
  assert.equal(s.verify(tampered, p.e, p.s), { ok: false, reason: 'invalid' }, 'a tampered expired URL is invalid, not expired');
});

test('the valid period is configurable', () => {
  const signed = signer(undefined, undefined, 600).sign(target);
  assert.is(signed.expires, Math.floor(NOW / 1000) + 600);
});

test('short secrets and periods are refused', () => {
  assert.throws(() => signer(undefined, Buffer.alloc(16)), /at least 32 bytes/);
  assert.throws(() => signer(undefined, undefined, 16), /more than 16 seconds/);
});

test('the secret: configured, else generated once into <data dir>/download-secret with mode 0600', () => {
  const tmp = tempDir();
  try {
    const configured = resolveDownloadSecret('x'.repeat(40), tmp.dir);
    assert.equal(configured.secret, Buffer.from('x'.repeat(40)));
    assert.is(configured.generated, false);

    const first = resolveDownloadSecret(undefined, tmp.dir);
    assert.is(first.generated, true);
    assert.is(first.file, join(tmp.dir, 'download-secret'));
    assert.is(first.secret.length, 64);
    assert.is(statSync(first.file!).mode & 0o777, 0o600);
    assert.equal(Buffer.from(readFileSync(first.file!, 'utf8').trim(), 'base64'), first.secret);

    const again = resolveDownloadSecret(undefined, tmp.dir);
    assert.is(again.generated, false);
    assert.equal(again.secret, first.secret);
  } finally {
    tmp.remove();
  }
});

test('a download-secret file without a usable secret is an error, not silently replaced', () => {
  const tmp = tempDir();
  try {
    writeFileSync(join(tmp.dir, 'download-secret'), `${randomBytes(8).toString('base64')}\n`);
    assert.throws(() => resolveDownloadSecret(undefined, tmp.dir), /does not hold a usable secret/);
  } finally {
    tmp.remove();
  }
});

test.run();
