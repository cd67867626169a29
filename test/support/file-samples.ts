/** Sample files made at test time (no binary fixtures): images with sharp, PDFs with pdf-lib. */
import { randomBytes } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
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

/** A PDF of `pages` pages; the first is `size` points (default A4 portrait). */
export const pdf = async (pages = 3, size: [number, number] = [595, 842]): Promise<Buffer> => {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) doc.addPage(i === 0 ? size : [612, 792]);
  return Buffer.from(await doc.save());
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
