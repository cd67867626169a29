import Router from '@koa/router';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import type { CommandDeps } from '../../commands/context.ts';
import { storeFile } from '../../commands/files.ts';
import { BlobTooLargeError, type BlobStore } from '../../blobs/blob-store.ts';
import type { PdfReadLimiter } from '../../blobs/pdf-read-limiter.ts';
import { filenameProblem, mediaTypeOf } from '../../domain/files/files.ts';
import { presentFile } from '../../queries/file-api.ts';
import { HttpError } from '../errors.ts';
import type { AppState } from '../state.ts';
import { drainThenClose } from '../read-body.ts';
import { metadataOf } from '../validate.ts';

export interface AdminFileDeps {
  readonly blobs: BlobStore;
  /** Largest accepted upload in bytes. */
  readonly fileLimitBytes: number;
  /** The service's bound on PDF reads at once. */
  readonly pdfReads: PdfReadLimiter;
}

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** A refusal before the body is read closes the connection, so the unread body is not read and discarded. */
const refused = (kind: string, message: string) => new HttpError(400, kind, message, { Connection: 'close' });

/**
 * 413. Refused up front (by Content-Length) it closes the connection so the body is never read;
 * refused mid-stream the rest is drained briefly instead, as closing with unread data resets the
 * connection and the client could lose the answer.
 */
const tooLarge = (limit: number, close: boolean) =>
  new HttpError(413, 'svc:api:payload-too-large', `The file is larger than the limit of ${limit} bytes`, close ? { Connection: 'close' } : {});

/**
 * The request body as a stream of its own: the store may destroy it (on an oversize body) without
 * destroying the request, so a 413 can still be answered; a client that goes away mid-upload
 * fails it, so nothing half-written is kept.
 */
const bodyOf = (req: IncomingMessage): PassThrough => {
  const body = new PassThrough({ highWaterMark: 64 * 1024 });
  req.once('error', (e) => body.destroy(e));
  req.once('close', () => {
    if (!req.complete) body.destroy(new HttpError(400, 'svc:file:upload-incomplete', 'The client closed the connection before the upload was complete'));
  });
  req.pipe(body);
  return body;
};

/**
 * `POST /api/admin/files?filename=<name>`: the raw request body is the file, its Content-Type the
 * recorded media type. 201 with the file's metadata when stored, 200 when the same bytes were
 * already stored (the first upload's name and type stand). Mounted where `/api/admin/` requires
 * the admin token, and NOT behind the JSON body parser.
 */
export const adminFileRoutes = (deps: CommandDeps, files: AdminFileDeps) => {
  const router = new Router<AppState>({ prefix: '/api/admin' });

  router.post('/files', async (ctx) => {
    const filename = single(ctx.query.filename);
    const problem = filenameProblem(filename);
    if (problem) throw refused('svc:file:bad-filename', problem);
    const mimeType = mediaTypeOf(ctx.get('Content-Type') || undefined);
    if (!mimeType) throw refused('svc:file:bad-content-type', 'Content-Type must be a media type such as image/png');
    const declared = ctx.request.length;
    if (declared !== undefined && declared > files.fileLimitBytes) throw tooLarge(files.fileLimitBytes, true);

    let result;
    try {
      result = await storeFile(deps, files.blobs, metadataOf(ctx), { source: bodyOf(ctx.req), filename: filename!, mimeType, limit: files.fileLimitBytes, pdfReads: files.pdfReads });
    } catch (e) {
      if (e instanceof BlobTooLargeError) {
        drainThenClose(ctx.req);
        throw tooLarge(files.fileLimitBytes, false);
      }
      throw e;
    }
    ctx.status = result.created ? 201 : 200;
    ctx.set('Location', `/api/v0-file/metadata/${result.file.digest}?fileSize=${result.file.fileSize}`);
    ctx.body = presentFile(result.file);
  });

  return router;
};
