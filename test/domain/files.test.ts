import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DomainError } from '../../src/domain/errors.ts';
import { eventDecoder, EventDecodeError } from '../../src/events/decode.ts';
import type { RecordedEvent } from '../../src/events/event-store.ts';
import { domainCodecs } from '../../src/events/codecs.ts';
import { FilesConfigError, loadFilesConfig } from '../../src/config/files-config.ts';
import {
  evolveFile,
  fileDecider,
  filenameProblem,
  fileStream,
  mediaTypeOf,
  MAX_TAG_NAME_LENGTH,
  type FileCommand,
  type FileEvent,
  type StoredFile,
} from '../../src/domain/files/files.ts';
import { decideRange, ifRangeAllows, noneMatch } from '../../src/http/byte-range.ts';
import { contentDisposition } from '../../src/http/content-disposition.ts';
import { deciderSpec } from '../support/decider-spec.ts';

const test = suite('files: domain, codecs, ranges, disposition, config');

const D = 'cd'.repeat(32);
const AT = new Date('2026-01-02T03:04:05.678Z');
const store = { digest: D, fileSize: 10, mimeType: 'image/png', filename: 'a.png', properties: { dimensions: { width: 1, height: 2, units: 'px' } } };
const decideStoreFile = (state: StoredFile | null, command: Omit<FileCommand & { type: 'StoreFile' }, 'type'>) => fileDecider.decide({ type: 'StoreFile', ...command }, state);
const decideChangeTags = (state: StoredFile | null, command: Omit<FileCommand & { type: 'ChangeFileTags' }, 'type'>) => fileDecider.decide({ type: 'ChangeFileTags', ...command }, state);

const thrown = (fn: () => unknown): DomainError => {
  try {
    fn();
  } catch (e) {
    assert.instance(e, DomainError);
    return e as DomainError;
  }
  return assert.unreachable('expected a DomainError') as never;
};

test('FileStored makes the file (createdAt = recorded time, no tags); storing again decides nothing', () => {
  const [event] = decideStoreFile(null, store);
  assert.equal(event, { type: 'FileStored', data: store });
  const file = evolveFile(null, event!, AT);
  assert.equal(file, { ...store, createdAt: '2026-01-02T03:04:05.678Z', tags: {} });
  assert.equal(decideStoreFile(file, { ...store, filename: 'other.png' }), []);
  assert.is(fileStream(D, 10), `file-${D}-10`);
});

test('tags: set, change and delete atomically; no-op changes decide nothing; unknown file is not-found', () => {
  let file: StoredFile = evolveFile(null, decideStoreFile(null, store)[0]!, AT);
  const apply = (changes: Record<string, string | null>) => {
    const events = decideChangeTags(file, { digest: D, fileSize: 10, changes });
    for (const e of events) file = evolveFile(file, e, AT);
    return events;
  };
  assert.equal(apply({ a: '1', b: '2' }), [{ type: 'FileTagsChanged', data: { digest: D, fileSize: 10, tags: { a: '1', b: '2' } } }]);
  assert.equal(file.tags, { a: '1', b: '2' });
  assert.equal(apply({ a: null, b: '2', c: '3', zz: null }), [{ type: 'FileTagsChanged', data: { digest: D, fileSize: 10, tags: { a: null, c: '3' } } }], 'only effective changes');
  assert.equal(file.tags, { b: '2', c: '3' });
  assert.equal(apply({ b: '2', nope: null }), []);
  assert.equal(apply({}), []);
  const missing = thrown(() => decideChangeTags(null, { digest: D, fileSize: 10, changes: { a: '1' } }));
  assert.is(missing.reason, 'not-found');
  assert.is(missing.kind, 'svc:api-v0:file:no-such-file');
  const bad = thrown(() => decideChangeTags(file, { digest: D, fileSize: 10, changes: { '': 'x' } }));
  assert.is(bad.kind, 'svc:api-v0:file:bad-tags');
});

test('FileTagsChanged before FileStored is a corrupt stream', () => {
  assert.throws(() => evolveFile(null, { type: 'FileTagsChanged', data: { digest: D, fileSize: 1, tags: {} } }, AT));
});

test('the codecs accept the events as decided and refuse malformed ones', () => {
  const decode = eventDecoder(domainCodecs);
  const recorded = (type: string, data: unknown): RecordedEvent => ({ id: 'e1', type, data, metadata: {}, stream: 's', revision: 0, position: 1, recordedAt: AT });
  const stored = decideStoreFile(null, { ...store, properties: { numberOfPages: 2, thumbnail: { width: 1, height: 1, mimeType: 'image/png', digest: D, fileSize: 3 } } })[0]!;
  assert.equal(decode<FileEvent>(recorded(stored.type, stored.data)).data, stored.data);
  const tags = { digest: D, fileSize: 10, tags: { a: 'x', b: null } };
  assert.equal(decode<FileEvent>(recorded('FileTagsChanged', tags)).data, tags);
  assert.throws(() => decode(recorded('FileStored', { ...store, fileSize: '10' })), (e: unknown) => e instanceof EventDecodeError);
  assert.throws(() => decode(recorded('FileTagsChanged', { ...tags, tags: { a: 1 } })), (e: unknown) => e instanceof EventDecodeError);
});

const spec = deciderSpec(fileDecider);
const stored: FileEvent = { type: 'FileStored', data: store };
const tagged = (tags: Record<string, string | null>): FileEvent => ({ type: 'FileTagsChanged', data: { digest: D, fileSize: 10, tags } });
const changeTags = (changes: Record<string, string | null>): FileCommand => ({ type: 'ChangeFileTags', digest: D, fileSize: 10, changes });

test('decider StoreFile: records the file; the same bytes again record nothing (the first name and type stand)', () => {
  spec.given([]).when({ type: 'StoreFile', ...store }).then([stored]);
  spec.given([stored]).when({ type: 'StoreFile', ...store, filename: 'b.png', mimeType: 'image/webp' }).thenNothing();
});

test('decider ChangeFileTags: records the effective changes only; none, nothing', () => {
  spec.given([stored]).when(changeTags({ a: '1', gone: null })).then([tagged({ a: '1' })]);
  spec.given([stored, tagged({ a: '1', b: '2' })]).when(changeTags({ a: null, b: '2', c: '3' })).then([tagged({ a: null, c: '3' })]);
  spec.given([stored, tagged({ a: '1' })]).when(changeTags({ a: '1', zz: null })).thenNothing();
  spec.given([stored]).when(changeTags({})).thenNothing();
});

test('decider ChangeFileTags: refused for a missing file and for bad tag names', () => {
  spec.given([]).when(changeTags({ a: '1' })).thenThrows('svc:api-v0:file:no-such-file', { reason: 'not-found', message: `File ${D} with size 10 does not exist` });
  const bad = { reason: 'invalid', message: `Tag names must be 1 to ${MAX_TAG_NAME_LENGTH} characters without control characters` } as const;
  spec.given([stored]).when(changeTags({ '': 'x' })).thenThrows('svc:api-v0:file:bad-tags', bad);
  spec.given([stored]).when(changeTags({ ['t'.repeat(MAX_TAG_NAME_LENGTH + 1)]: 'x' })).thenThrows('svc:api-v0:file:bad-tags', bad);
  spec.given([stored]).when(changeTags({ ok: '1', 'a\u0007b': null })).thenThrows('svc:api-v0:file:bad-tags', bad);
  spec.given([stored]).when(changeTags({ ['t'.repeat(MAX_TAG_NAME_LENGTH)]: 'x' })).then([tagged({ ['t'.repeat(MAX_TAG_NAME_LENGTH)]: 'x' })]);
});

test('filenames: required, at most 255 characters, no control characters, slashes or dot names', () => {
  assert.is(filenameProblem('résumé 2024 (final).pdf'), undefined);
  assert.is(filenameProblem('x'.repeat(255)), undefined);
  for (const bad of [undefined, '', 'x'.repeat(256), 'a/b', 'a\\b', 'a\nb', 'a\u0000', '.', '..']) assert.type(filenameProblem(bad), 'string', JSON.stringify(bad));
});

test('media types: lower-cased type/subtype without parameters; octet-stream by default; malformed refused', () => {
  assert.is(mediaTypeOf('Image/PNG; foo=bar'), 'image/png');
  assert.is(mediaTypeOf('text/plain;charset=utf-8'), 'text/plain');
  assert.is(mediaTypeOf('application/vnd.openxmlformats-officedocument.wordprocessingml.document'), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
  assert.is(mediaTypeOf(undefined), 'application/octet-stream');
  assert.is(mediaTypeOf(''), 'application/octet-stream');
  for (const bad of ['png', 'image/', '/png', 'image/png/x', 'ima ge/png']) assert.is(mediaTypeOf(bad), undefined, bad);
});

test('byte ranges: single ranges served, unsatisfiable ones refused, anything else ignored', () => {
  const r = (h: string | undefined, size = 100) => decideRange(h, size);
  assert.equal(r(undefined), { kind: 'full' });
  assert.equal(r('bytes=0-9'), { kind: 'partial', start: 0, end: 9 });
  assert.equal(r('bytes=90-'), { kind: 'partial', start: 90, end: 99 });
  assert.equal(r('bytes=-10'), { kind: 'partial', start: 90, end: 99 });
  assert.equal(r('bytes=-1000'), { kind: 'partial', start: 0, end: 99 });
  assert.equal(r('bytes=50-5000'), { kind: 'partial', start: 50, end: 99 });
  assert.equal(r('BYTES=1-2'), { kind: 'partial', start: 1, end: 2 });
  assert.equal(r('bytes=100-'), { kind: 'unsatisfiable' });
  assert.equal(r('bytes=5-2'), { kind: 'unsatisfiable' });
  assert.equal(r('bytes=-0'), { kind: 'unsatisfiable' });
  assert.equal(r('bytes=0-0', 0), { kind: 'unsatisfiable' });
  assert.equal(r('bytes=-5', 0), { kind: 'unsatisfiable' });
  for (const ignored of ['bytes=0-1,5-6', 'items=0-1', 'bytes=a-b', 'bytes=-', 'nonsense']) assert.equal(r(ignored), { kind: 'full' }, ignored);
  assert.ok(ifRangeAllows(undefined, '"x"'));
  assert.ok(ifRangeAllows('"x"', '"x"'));
  assert.not.ok(ifRangeAllows('"y"', '"x"'));
  assert.not.ok(ifRangeAllows('Wed, 21 Oct 2015 07:28:00 GMT', '"x"'));
  assert.ok(noneMatch('"a", "x"', '"x"'));
  assert.ok(noneMatch('W/"x"', '"x"'));
  assert.ok(noneMatch('*', '"x"'));
  assert.not.ok(noneMatch('"y"', '"x"'));
  assert.not.ok(noneMatch(undefined, '"x"'));
});

test('Content-Disposition: an ASCII fallback and the exact name as filename* (RFC 6266 / 8187)', () => {
  assert.is(contentDisposition('report.pdf'), `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
  assert.is(contentDisposition('résumé "v2" (1).pdf'), `attachment; filename="r_sum_ _v2_ (1).pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22v2%22%20%281%29.pdf`);
  assert.is(contentDisposition("it's*.txt", 'inline'), `inline; filename="it's*.txt"; filename*=UTF-8''it%27s%2A.txt`);
  assert.is(contentDisposition('日本.txt'), `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`);
});

test('files configuration: defaults, values and errors (never echoing the secret)', () => {
  assert.equal(loadFilesConfig({}), {
    downloadSecret: undefined,
    downloadValidSeconds: 14_400,
    fileLimitBytes: 1024 ** 3,
    pdfReads: { concurrency: 2, queue: 16, maxWaitMs: 30_000 },
  });
  const secret = 's'.repeat(40);
  const env = { SVC_DOWNLOAD_SECRET: secret, SVC_DOWNLOAD_VALID_SECONDS: '600', SVC_FILE_LIMIT: '2mb', SVC_PDF_CONCURRENCY: '1', SVC_PDF_QUEUE: '0', SVC_PDF_QUEUE_WAIT_MS: '500' };
  assert.equal(loadFilesConfig(env), {
    downloadSecret: secret,
    downloadValidSeconds: 600,
    fileLimitBytes: 2 * 1024 ** 2,
    pdfReads: { concurrency: 1, queue: 0, maxWaitMs: 500 },
  });
  assert.throws(() => loadFilesConfig({ SVC_PDF_CONCURRENCY: '0' }), /SVC_PDF_CONCURRENCY/);
  try {
    loadFilesConfig({ SVC_DOWNLOAD_SECRET: 'short-secret', SVC_DOWNLOAD_VALID_SECONDS: '5', SVC_FILE_LIMIT: 'lots' });
    assert.unreachable('expected a FilesConfigError');
  } catch (e) {
    assert.instance(e, FilesConfigError);
    const problems = (e as FilesConfigError).problems;
    assert.is(problems.length, 3);
    assert.match(problems[0]!, /^SVC_DOWNLOAD_SECRET must be at least 32 characters/);
    assert.not.match((e as Error).message, 'short-secret');
  }
});

test.run();
