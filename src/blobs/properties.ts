/**
 * Properties of a stored file, taken from its bytes by well-kept libraries: image dimensions and a
 * thumbnail (sharp / libvips) for JPEG, PNG, GIF, WebP, TIFF and AVIF; page count, first-page
 * size and a thumbnail of the first page (PDF.js in a bounded process, see pdf-reader.ts; so many at
 * once, see pdf-read-limiter.ts) for PDF.
 * The declared media type chooses the reader, and the bytes must really be of that format: anything
 * else yields no properties, never an error, so such a file still stores.
 */
import type { Readable } from 'node:stream';
import sharp from 'sharp';
import { readPdf, type PdfLimits, type PdfProcessObserver } from './pdf-reader.ts';
import { PdfReadsBusyError, type PdfReadLimiter } from './pdf-read-limiter.ts';
import type { Dimensions } from '../domain/files/files.ts';

// A server process: no libvips operation cache (it would hold decoded images), one thread per image.
sharp.cache(false);
sharp.concurrency(1);

/** Formats as sharp names them, by declared media type. */
const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/pjpeg': 'jpeg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/tiff': 'tiff',
  'image/avif': 'heif',
};
const PDF_TYPES = new Set(['application/pdf', 'application/x-pdf']);

export const THUMBNAIL_MAX_PIXELS = 64;
export const THUMBNAIL_MIME_TYPE = 'image/png';
/** Files larger than this are stored without properties (their readers need the bytes in memory). */
export const DEFAULT_MAX_ANALYSED_BYTES = 64 * 1024 ** 2;
/** Images with more pixels than this are not decoded (decompression bombs). */
const MAX_INPUT_PIXELS = 100_000_000;

export interface ExtractedProperties {
  readonly dimensions?: Dimensions;
  readonly numberOfPages?: number;
  /** The thumbnail image itself, to be stored as a blob of its own. */
  readonly thumbnail?: { readonly width: number; readonly height: number; readonly mimeType: string; readonly bytes: Buffer };
}

export interface ExtractOptions {
  readonly maxBytes?: number;
  /** Told about bytes that did not match their declared type, or a PDF page that could not be drawn (for a log line); never thrown. */
  readonly onUnreadable?: (reason: string) => void;
  /** Bounds of the PDF reader (defaults in pdf-reader.ts). */
  readonly pdf?: PdfLimits;
  /** The service's bound on PDF reads at once; a PDF that gets no turn is stored without its properties. Absent: unbounded. */
  readonly pdfReads?: PdfReadLimiter;
  /** Told when a PDF reading process starts and exits. */
  readonly onPdfProcess?: PdfProcessObserver;
}

const readAll = async (stream: Readable, size: number): Promise<Buffer> => {
  const bytes = Buffer.allocUnsafe(size);
  let offset = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (offset + chunk.length > size) throw new Error('The blob is longer than its recorded size');
    chunk.copy(bytes, offset);
    offset += chunk.length;
  }
  if (offset !== size) throw new Error('The blob is shorter than its recorded size');
  return bytes;
};

const imageProperties = async (bytes: Buffer, format: string): Promise<ExtractedProperties> => {
  const options = { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' as const };
  const meta = await sharp(bytes, options).metadata();
  if (meta.format !== format || !meta.width || !meta.height) throw new Error(`the bytes are ${meta.format ?? 'of no known format'}, not ${format}`);
  // EXIF orientations 5 to 8 turn the image by 90 degrees: report the size as it is shown.
  const turned = (meta.orientation ?? 1) >= 5;
  const dimensions = { width: turned ? meta.height : meta.width, height: turned ? meta.width : meta.height, units: 'px' };
  const { data, info } = await sharp(bytes, options)
    .rotate()
    .resize(THUMBNAIL_MAX_PIXELS, THUMBNAIL_MAX_PIXELS, { fit: 'inside', withoutEnlargement: true })
    .png()
    .toBuffer({ resolveWithObject: true });
  return { dimensions, thumbnail: { width: info.width, height: info.height, mimeType: THUMBNAIL_MIME_TYPE, bytes: data } };
};

/** The thumbnail's size for a picture of width x height: inside the box, aspect ratio kept, never enlarged. */
const thumbnailSize = (width: number, height: number) => {
  const scale = Math.min(1, THUMBNAIL_MAX_PIXELS / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
};

const pdfProperties = async (bytes: Buffer, options: ExtractOptions): Promise<ExtractedProperties> => {
  // The header must be near the start (PDF readers allow some leading junk, up to 1 KiB).
  if (bytes.subarray(0, 1024).indexOf('%PDF-') < 0) throw new Error('no PDF header');
  // Drawn at twice the thumbnail's size, then reduced by sharp as images are, for smooth edges.
  const read = await readPdf(bytes, 2 * THUMBNAIL_MAX_PIXELS, options.pdf, options.onPdfProcess);
  if (read.drawingProblem) options.onUnreadable?.(`no thumbnail: ${read.drawingProblem}`);
  if (read.numberOfPages < 1) throw new Error('no pages');
  const hasSize = read.width > 0 && read.height > 0;
  const properties = { numberOfPages: read.numberOfPages, ...(hasSize ? { dimensions: { width: read.width, height: read.height, units: 'pt' } } : {}) };
  if (!hasSize || !read.drawing) return properties;
  const size = thumbnailSize(read.width, read.height);
  const { data, info } = await sharp(read.drawing.rgba, { raw: { width: read.drawing.width, height: read.drawing.height, channels: 4 } })
    .resize(size.width, size.height, { fit: 'fill' })
    // Drawn on white paper: opaque, so no alpha channel to store.
    .removeAlpha()
    .png()
    .toBuffer({ resolveWithObject: true });
  return { ...properties, thumbnail: { width: info.width, height: info.height, mimeType: THUMBNAIL_MIME_TYPE, bytes: data } };
};

/**
 * Reads the file (through `open`) only when its declared type has a reader and it is not too
 * large. Never throws for unreadable content: the answer is then `{}`.
 */
export const extractProperties = async (
  open: () => Promise<Readable>,
  mimeType: string,
  size: number,
  options: ExtractOptions = {},
): Promise<ExtractedProperties> => {
  const format = IMAGE_FORMATS[mimeType];
  const pdf = PDF_TYPES.has(mimeType);
  if ((!format && !pdf) || size === 0 || size > (options.maxBytes ?? DEFAULT_MAX_ANALYSED_BYTES)) return {};
  const analyse = async () => {
    const bytes = await readAll(await open(), size);
    try {
      return format ? await imageProperties(bytes, format) : await pdfProperties(bytes, options);
    } catch (e) {
      options.onUnreadable?.(e instanceof Error ? e.message : String(e));
      return {};
    }
  };
  if (!pdf || !options.pdfReads) return analyse();
  // The bytes are read only once the turn comes: a waiting PDF holds no memory.
  try {
    return await options.pdfReads.run(analyse);
  } catch (e) {
    if (!(e instanceof PdfReadsBusyError)) throw e;
    options.onUnreadable?.(e.message);
    return {};
  }
};
