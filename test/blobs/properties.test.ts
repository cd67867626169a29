import { Readable } from 'node:stream';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { extractProperties, THUMBNAIL_MAX_PIXELS, type ExtractOptions } from '../../src/blobs/properties.ts';
import { avif, gif, jpeg, pdf, png, random, rotatedJpeg, tiff, webp } from '../support/file-samples.ts';

const test = suite('file properties');

const extract = (bytes: Buffer, mimeType: string, options: ExtractOptions = {}) =>
  extractProperties(async () => Readable.from([bytes]), mimeType, bytes.length, options);

/** The thumbnail's grey level (0 black, 255 white) at a point given as fractions of its width and height. */
const greyAt = async (png: Buffer, x: number, y: number): Promise<number> => {
  const { data, info } = await sharp(png).removeAlpha().greyscale().raw().toBuffer({ resolveWithObject: true });
  return data[Math.min(info.height - 1, Math.floor(y * info.height)) * info.width + Math.min(info.width - 1, Math.floor(x * info.width))]!;
};

const expectImage = async (bytes: Buffer, mimeType: string, width: number, height: number) => {
  const props = await extract(bytes, mimeType);
  assert.equal(props.dimensions, { width, height, units: 'px' }, mimeType);
  assert.is(props.numberOfPages, undefined);
  const thumb = props.thumbnail!;
  assert.ok(thumb, `${mimeType} has a thumbnail`);
  assert.is(thumb.mimeType, 'image/png');
  assert.ok(Math.max(thumb.width, thumb.height) <= THUMBNAIL_MAX_PIXELS, 'thumbnail fits the box');
  const meta = await sharp(thumb.bytes).metadata();
  assert.equal([meta.format, meta.width, meta.height], ['png', thumb.width, thumb.height], 'the thumbnail bytes are the PNG it describes');
  return thumb;
};

test('PNG: dimensions in px and a PNG thumbnail inside 64x64 with the aspect ratio kept', async () => {
  const thumb = await expectImage(await png(300, 200), 'image/png', 300, 200);
  assert.equal([thumb.width, thumb.height], [64, 43]);
});

test('JPEG, GIF, WebP, TIFF and AVIF', async () => {
  await expectImage(await jpeg(300, 200), 'image/jpeg', 300, 200);
  await expectImage(await jpeg(30, 20), 'image/jpg', 30, 20);
  await expectImage(await gif(120, 80), 'image/gif', 120, 80);
  const w = await expectImage(await webp(90, 160), 'image/webp', 90, 160);
  assert.equal([w.width, w.height], [36, 64]);
  await expectImage(await tiff(40, 30), 'image/tiff', 40, 30);
  await expectImage(await avif(64, 48), 'image/avif', 64, 48);
});

test('small images are not enlarged for their thumbnail', async () => {
  const thumb = await expectImage(await png(20, 10), 'image/png', 20, 10);
  assert.equal([thumb.width, thumb.height], [20, 10]);
});

test('EXIF orientation: dimensions and thumbnail as the image is shown', async () => {
  const thumb = await expectImage(await rotatedJpeg(300, 200), 'image/jpeg', 200, 300);
  assert.equal([thumb.width, thumb.height], [43, 64]);
});

const LEFT_HALF_BLACK = (w: number, h: number) => `0 0 0 rg 0 0 ${w / 2} ${h} re f`;

test('PDF: numberOfPages, the first page size in pt, and a PNG thumbnail of the first page drawn as it is shown', async () => {
  const props = await extract(await pdf(3, [595, 842], { draw: LEFT_HALF_BLACK(595, 842) }), 'application/pdf');
  assert.equal(props.numberOfPages, 3);
  assert.equal(props.dimensions, { width: 595, height: 842, units: 'pt' });
  const thumb = props.thumbnail!;
  assert.ok(thumb, 'a PDF has a thumbnail');
  assert.equal([thumb.mimeType, thumb.width, thumb.height], ['image/png', 45, 64], 'inside 64x64, aspect ratio kept, as an image of 595x842 px');
  const meta = await sharp(thumb.bytes).metadata();
  assert.equal([meta.format, meta.width, meta.height], ['png', 45, 64], 'the thumbnail bytes are the PNG it describes');
  assert.ok((await greyAt(thumb.bytes, 0.25, 0.5)) < 40, 'the black left half is drawn');
  assert.ok((await greyAt(thumb.bytes, 0.75, 0.5)) > 215, 'the right half is white paper');
});

test('PDF: a landscape first page, and a page turned by /Rotate 90, are measured and drawn as shown', async () => {
  const wide = await extract(await pdf(1, [842, 595], { draw: LEFT_HALF_BLACK(842, 595) }), 'application/pdf');
  assert.equal(wide.dimensions, { width: 842, height: 595, units: 'pt' });
  assert.equal([wide.thumbnail?.width, wide.thumbnail?.height], [64, 45]);
  assert.ok((await greyAt(wide.thumbnail!.bytes, 0.25, 0.5)) < 40);
  assert.ok((await greyAt(wide.thumbnail!.bytes, 0.75, 0.5)) > 215);

  // Turned clockwise: the page's left half is shown on top.
  const turned = await extract(await pdf(2, [595, 842], { draw: LEFT_HALF_BLACK(595, 842), rotate: 90 }), 'application/pdf');
  assert.equal([turned.numberOfPages, turned.dimensions], [2, { width: 842, height: 595, units: 'pt' }]);
  assert.equal([turned.thumbnail?.width, turned.thumbnail?.height], [64, 45]);
  assert.ok((await greyAt(turned.thumbnail!.bytes, 0.5, 0.25)) < 40, 'top dark');
  assert.ok((await greyAt(turned.thumbnail!.bytes, 0.5, 0.75)) > 215, 'bottom white');
});

test('PDF: a small page is not enlarged for its thumbnail', async () => {
  const props = await extract(await pdf(1, [20, 10], { draw: LEFT_HALF_BLACK(20, 10) }), 'application/pdf');
  assert.equal(props.dimensions, { width: 20, height: 10, units: 'pt' });
  assert.equal([props.thumbnail?.width, props.thumbnail?.height], [20, 10]);
});

test('PDF: a page tree claiming two billion pages is counted by its real pages', async () => {
  const props = await extract(await pdf(1, [595, 842], { claimedCount: 2_000_000_000, draw: LEFT_HALF_BLACK(595, 842) }), 'application/pdf');
  assert.is(props.numberOfPages, 1);
  assert.equal(props.dimensions, { width: 595, height: 842, units: 'pt' });
});

test('PDF: truncated and garbage files give no properties and no thumbnail, and say why', async () => {
  const whole = await pdf(3, [595, 842], { draw: LEFT_HALF_BLACK(595, 842) });
  const reasons: string[] = [];
  const onUnreadable = (r: string) => reasons.push(r);
  assert.equal(await extract(whole.subarray(0, 120), 'application/pdf', { onUnreadable }), {}, 'cut before its first page');
  assert.equal(await extract(Buffer.concat([Buffer.from('%PDF-1.7\n'), random(20_000, 3)]), 'application/pdf', { onUnreadable }), {}, 'a header, then noise');
  const cycle = '%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [2 0 R] /Count 1 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF';
  assert.equal(await extract(Buffer.from(cycle), 'application/pdf', { onUnreadable }), {}, 'a page tree that is its own child');
  assert.is(reasons.length, 3);
  assert.match(reasons[2]!, /circular/);
});

test('PDF: reading is bounded in time (the reader is stopped, the file has no properties)', async () => {
  const reasons: string[] = [];
  const props = await extract(await pdf(1), 'application/pdf', { pdf: { timeoutMs: 1 }, onUnreadable: (r) => reasons.push(r) });
  assert.equal(props, {});
  assert.match(reasons.join(), /did not finish within 1 ms/);
});

test('PDF: a page of ten million operations outgrows the heap limit: the first page has no thumbnail, the process lives on', async () => {
  const reasons: string[] = [];
  const bytes = await pdf(1, [300, 400], { draw: '0 0 1 1 re', drawTimes: 10_000_000 });
  assert.ok(bytes.length < 1024 ** 2, 'a small file');
  const props = await extract(bytes, 'application/pdf', { pdf: { timeoutMs: 300_000, maxMemoryMb: 100_000 }, onUnreadable: (r) => reasons.push(r) });
  assert.equal(props, { numberOfPages: 1, dimensions: { width: 300, height: 400, units: 'pt' } });
  assert.match(reasons.join(), /ran out of memory \(heap limit 256 MiB\)/);
});

test('PDF: a content stream that inflates to 1 GiB is stopped by the memory limit (off the heap, where decoded streams live)', async () => {
  const reasons: string[] = [];
  const bytes = await pdf(1, [300, 400], { draw: ' '.repeat(1023), drawTimes: 1024 ** 2 });
  assert.ok(bytes.length < 8 * 1024 ** 2, 'a small file');
  const props = await extract(bytes, 'application/pdf', { pdf: { timeoutMs: 300_000, maxMemoryMb: 400 }, onUnreadable: (r) => reasons.push(r) });
  assert.equal(props, { numberOfPages: 1, dimensions: { width: 300, height: 400, units: 'pt' } });
  assert.match(reasons.join(), /used more than 400 MiB of memory/);
});

test('PDF: images larger than the pixel limit are left out of the thumbnail, not decoded', async () => {
  const bytes = await pdf(1, [100, 100], { blackImage: 1200 });
  const drawn = await extract(bytes, 'application/pdf');
  assert.ok((await greyAt(drawn.thumbnail!.bytes, 0.5, 0.5)) < 40, 'within the default limit the black image is drawn');
  const capped = await extract(bytes, 'application/pdf', { pdf: { maxImagePixels: 1_000_000 } });
  assert.equal(capped.dimensions, { width: 100, height: 100, units: 'pt' });
  assert.ok((await greyAt(capped.thumbnail!.bytes, 0.5, 0.5)) > 215, 'over the limit the page is drawn without it');
});

test('bytes that are not what the type claims give no properties (and say why)', async () => {
  const reasons: string[] = [];
  const onUnreadable = (r: string) => reasons.push(r);
  assert.equal(await extract(Buffer.from('definitely not an image'), 'image/png', { onUnreadable }), {});
  assert.equal(await extract(await jpeg(), 'image/png', { onUnreadable }), {}, 'a JPEG labelled PNG');
  assert.equal(await extract(await png(), 'application/pdf', { onUnreadable }), {}, 'a PNG labelled PDF');
  assert.equal(await extract(Buffer.from('%PDF-1.7\nthis is not really a PDF'), 'application/pdf', { onUnreadable }), {});
  assert.equal(await extract(random(5000, 1), 'image/gif', { onUnreadable }), {});
  assert.is(reasons.length, 5);
});

test('types without a reader are not read at all', async () => {
  let opened = 0;
  const bytes = await png();
  const props = await extractProperties(async () => (opened++, Readable.from([bytes])), 'application/octet-stream', bytes.length);
  assert.equal(props, {});
  assert.equal(await extractProperties(async () => (opened++, Readable.from([bytes])), 'image/svg+xml', bytes.length), {});
  assert.equal(await extractProperties(async () => (opened++, Readable.from([bytes])), 'text/plain', bytes.length), {});
  assert.is(opened, 0);
});

test('files larger than the analysis limit, and empty files, are stored without properties', async () => {
  const bytes = await png();
  assert.equal(await extract(bytes, 'image/png', { maxBytes: bytes.length - 1 }), {});
  assert.ok((await extract(bytes, 'image/png', { maxBytes: bytes.length })).dimensions);
  assert.equal(await extractProperties(async () => Readable.from([]), 'image/png', 0), {});
});

test.run();
