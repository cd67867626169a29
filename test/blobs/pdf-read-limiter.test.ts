import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { extractProperties, type ExtractOptions } from '../../src/blobs/properties.ts';
import { PdfReadLimiter, PdfReadsBusyError } from '../../src/blobs/pdf-read-limiter.ts';
import { pdf, png } from '../support/file-samples.ts';

const test = suite('PDF reads at once');

/** Extracts as an upload does; `opened` counts how often the bytes were read from the store. */
const extractCounting = (bytes: Buffer, mimeType: string, options: ExtractOptions) => {
  const counts = { opened: 0 };
  const props = extractProperties(async () => (counts.opened++, Readable.from([bytes])), mimeType, bytes.length, options);
  return { props, counts };
};

/** A slot of the limiter held until `release()`. */
const holdSlot = (limiter: PdfReadLimiter) => {
  let release!: () => void;
  const held = limiter.run(() => new Promise<void>((resolve) => (release = resolve)));
  return { release: () => (release(), held) };
};

/** Counts reading processes alive (started, not yet exited), and the most alive at once. */
const processCounter = () => {
  const c = { alive: 0, most: 0, started: 0, exited: 0 };
  const observe = (change: 'started' | 'exited') => {
    if (change === 'started') (c.alive++, c.started++);
    else (c.alive--, c.exited++);
    c.most = Math.max(c.most, c.alive);
  };
  return { c, observe };
};

test('a limit of 1: concurrent reads of a slow PDF run one reading process at a time, and every one gets its properties', async () => {
  const limiter = new PdfReadLimiter({ concurrency: 1, queue: 10, maxWaitMs: 600_000 });
  const { c, observe } = processCounter();
  // A page of 20,000 drawing operations: each read takes a while, long enough to overlap the next one's start.
  const slow = await pdf(2, [300, 400], { draw: '0 0 0 rg 0 0 1 1 re f', drawTimes: 20_000 });
  const reasons: string[] = [];
  const reads = Array.from({ length: 4 }, () =>
    extractCounting(slow, 'application/pdf', { pdfReads: limiter, onPdfProcess: observe, pdf: { timeoutMs: 300_000 }, onUnreadable: (r) => reasons.push(r) }),
  );
  // All four asked at once: one runs, three wait, none has read its bytes yet.
  assert.is(limiter.active, 1);
  assert.is(limiter.queued, 3);
  const results = await Promise.all(reads.map((r) => r.props));
  assert.equal(reasons, []);
  for (const props of results) {
    assert.equal(props.numberOfPages, 2);
    assert.equal(props.dimensions, { width: 300, height: 400, units: 'pt' });
    assert.ok(props.thumbnail, 'a thumbnail');
  }
  assert.equal(c, { alive: 0, most: 1, started: 4, exited: 4 }, 'one process at a time, each exited before the next started');
  assert.equal([limiter.active, limiter.queued], [0, 0]);
});

test('a PDF beyond the queue is not read (its bytes not even opened) and says why; the next one after the turn is read', async () => {
  const limiter = new PdfReadLimiter({ concurrency: 1, queue: 0, maxWaitMs: 600_000 });
  const { c, observe } = processCounter();
  const slot = holdSlot(limiter);
  const reasons: string[] = [];
  const bytes = await pdf(1);
  const refused = extractCounting(bytes, 'application/pdf', { pdfReads: limiter, onPdfProcess: observe, onUnreadable: (r) => reasons.push(r) });
  assert.equal(await refused.props, {});
  assert.is(refused.counts.opened, 0);
  assert.equal(reasons.length, 1);
  assert.match(reasons[0]!, /^not read: 1 PDF reads running and 0 waiting, the most allowed \(SVC_PDF_CONCURRENCY, SVC_PDF_QUEUE\)$/);
  assert.is(c.started, 0, 'no reading process started');

  await slot.release();
  const read = extractCounting(bytes, 'application/pdf', { pdfReads: limiter, onPdfProcess: observe });
  assert.equal((await read.props).numberOfPages, 1);
  assert.is(c.started, 1);
});

test('a PDF that waits longer than the bound is given up without properties; the queue forgets it', async () => {
  const limiter = new PdfReadLimiter({ concurrency: 1, queue: 5, maxWaitMs: 50 });
  const slot = holdSlot(limiter);
  const reasons: string[] = [];
  const bytes = await pdf(1);
  const waited = extractCounting(bytes, 'application/pdf', { pdfReads: limiter, onUnreadable: (r) => reasons.push(r) });
  assert.is(limiter.queued, 1);
  assert.equal(await waited.props, {});
  assert.is(waited.counts.opened, 0);
  assert.match(reasons.join(), /^not read: no turn among 1 PDF reads running within 50 ms \(SVC_PDF_QUEUE_WAIT_MS\)$/);
  assert.equal([limiter.active, limiter.queued], [1, 0]);
  await slot.release();
  assert.equal([limiter.active, limiter.queued], [0, 0]);
});

test('images are not held up by the PDF bound', async () => {
  const limiter = new PdfReadLimiter({ concurrency: 1, queue: 0, maxWaitMs: 600_000 });
  const slot = holdSlot(limiter);
  const image = extractCounting(await png(30, 20), 'image/png', { pdfReads: limiter });
  assert.equal((await image.props).dimensions, { width: 30, height: 20, units: 'px' });
  await slot.release();
});

test('the limiter: first come, first served; the slot passes on; refusals are PdfReadsBusyError', async () => {
  const limiter = new PdfReadLimiter({ concurrency: 2, queue: 2, maxWaitMs: 600_000 });
  const order: string[] = [];
  const gates = new Map<string, () => void>();
  const task = (name: string) =>
    limiter.run(
      () =>
        new Promise<string>((resolve) => {
          order.push(name);
          gates.set(name, () => resolve(name));
        }),
    );
  const a = task('a');
  const b = task('b');
  const c = task('c');
  const d = task('d');
  const e = task('e');
  const refused = await e.then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.instance(refused, PdfReadsBusyError);
  await Promise.resolve();
  assert.equal(order, ['a', 'b']);
  gates.get('b')!();
  assert.is(await b, 'b');
  assert.equal(order, ['a', 'b', 'c']);
  assert.equal([limiter.active, limiter.queued], [2, 1]);
  gates.get('a')!();
  gates.get('c')!();
  assert.equal(await Promise.all([a, c]), ['a', 'c']);
  assert.equal(order, ['a', 'b', 'c', 'd']);
  gates.get('d')!();
  assert.is(await d, 'd');
  assert.equal([limiter.active, limiter.queued], [0, 0]);
});

test.run();
