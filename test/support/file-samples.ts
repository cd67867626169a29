/** Sample files made at test time (no binary fixtures): images with sharp, PDFs written object by object. */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { createDeflate, deflateSync } from 'node:zlib';
import sharp from 'sharp';

const canvas = (width: number, height: number, alpha = false) =>
  sharp({ create: { width, height, channels: alpha ? 4 : 3, background: alpha ? { r: 200, g: 30, b: 60, alpha: 0.5 } : { r: 20, g: 120, b: 220 } } });

export const png = (width = 300, height = 200) => canvas(width, height, true).png().toBuffer();
export const jpeg = (width = 300, height = 200) => canvas(width, height).jpeg().toBuffer();
/** A JPEG stored 300x200 with EXIF orientation 6 (shown turned by 90 degrees, 200x300). */
export const rotatedJpeg = (width = 300, height = 200) => canvas(width, height).jpeg().withMetadata({ orientation: 6 }).toBuffer();
export const gif = (width = 120, height = 80) => canvas(width, height).gif().toBuffer();
export const webp = (width = 90, height = 160) => canvas(width, height).webp().toBuffer();
export const tiff = (width = 40, height = 30) => canvas(width, height).tiff().toBuffer();
export const avif = (width = 64, height = 48) => canvas(width, height).avif().toBuffer();

export interface PdfOptions {
  /** Content stream of the first page (PDF operators; the origin is the bottom left corner, in points). */
  readonly draw?: string;
  /** The first page's /Rotate. */
  readonly rotate?: number;
  /** What the page tree's /Count claims, whatever the number of pages really is. */
  readonly claimedCount?: number;
  /** A DeviceGray image of this many pixels a side, all black, painted over the whole first page (named /Im0). */
  readonly blackImage?: number;
  /** The first page's content repeated this many times, deflated (a small file that inflates to a big stream). */
  readonly drawTimes?: number;
}

/** `text` repeated `times` times, deflated without ever holding the whole inflated text. */
const deflateRepeated = (text: string, times: number): Promise<Buffer> => {
  const chunk = Buffer.from(text.repeat(Math.max(1, Math.floor((1 << 20) / text.length))), 'latin1');
  const perChunk = chunk.length / text.length;
  const chunks = function* () {
    for (let left = times; left > 0; left -= perChunk) yield left >= perChunk ? chunk : chunk.subarray(0, left * text.length);
  };
  return buffer(Readable.from(chunks()).pipe(createDeflate({ level: 1 })));
};

/**
 * A PDF of `pages` pages written by hand (so a test controls every byte a hostile file could
 * alter); the first is `size` points (default A4 portrait), the others US Letter.
 */
export const pdf = async (pages = 3, size: [number, number] = [595, 842], options: PdfOptions = {}): Promise<Buffer> => {
  const objects: Buffer[] = [];
  const add = (body: string | Buffer) => (objects.push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body), objects.length);
  const stream = (dict: string, data: Buffer) =>
    Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add('');
  const image = options.blackImage
    ? add(stream(`/Type /XObject /Subtype /Image /Width ${options.blackImage} /Height ${options.blackImage} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode`, deflateSync(Buffer.alloc(options.blackImage ** 2))))
    : undefined;
  const draw = (options.draw ?? '') + (image ? `\nq ${size[0]} 0 0 ${size[1]} 0 0 cm /Im0 Do Q` : '');
  const content = add(
    options.drawTimes ? stream('/Filter /FlateDecode', await deflateRepeated(`${draw}\n`, options.drawTimes)) : stream('', Buffer.from(draw, 'latin1')),
  );
  const kids: number[] = [];
  for (let i = 0; i < pages; i++) {
    const [w, h] = i === 0 ? size : [612, 792];
    const extra = i === 0 ? ` /Contents ${content} 0 R${options.rotate ? ` /Rotate ${options.rotate}` : ''}${image ? ` /Resources << /XObject << /Im0 ${image} 0 R >> >>` : ''}` : '';
    kids.push(add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}]${extra} >>`));
  }
  objects[1] = Buffer.from(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${options.claimedCount ?? pages} >>`, 'latin1');

  const parts = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets = objects.map((body, i) => {
    const at = length;
    const part = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')]);
    parts.push(part);
    length += part.length;
    return at;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f\r\n`, ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n\r\n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
};

export const random = (size: number, seed?: number): Buffer => {
  if (seed === undefined) return randomBytes(size);
  const out = Buffer.allocUnsafe(size);
  let a = seed >>> 0;
  for (let i = 0; i < size; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    out[i] = (Math.imul(a ^ (a >>> 15), a | 1) >>> 24) & 0xff;
  }
  return out;
};
