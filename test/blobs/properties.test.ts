import { Readable } from 'node:stream';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { extractProperties, THUMBNAIL_MAX_PIXELS } from '../../src/blobs/properties.ts';
import { avif, gif, jpeg, pdf, png, random, rotatedJpeg, tiff, webp } from '../support/file-samples.ts';

const test = suite('file properties');

const extract = (bytes: Buffer, mimeType: string, options: { maxBytes?: number; onUnreadable?: (r: string) => void } = {}) =>
  extractProperties(async () => Readable.from([bytes]), mimeType, bytes.length, options);

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

test('PDF: numberOfPages and the first page size in pt', async () => {
  assert.equal(await extract(await pdf(3), 'application/pdf'), { numberOfPages: 3, dimensions: { width: 595, height: 842, units: 'pt' } });
  assert.equal(await extract(await pdf(1, [842, 595]), 'application/pdf'), { numberOfPages: 1, dimensions: { width: 842, height: 595, units: 'pt' } });
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
