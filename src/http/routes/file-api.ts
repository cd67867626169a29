import Router from '@koa/router';
import type { Middleware } from 'koa';
import * as t from 'io-ts';
import type { CommandDeps } from '../../commands/context.ts';
import { changeFileTags, keyMayWriteFileTags } from '../../commands/files.ts';
import { FILE_TAGS_PATH } from '../../domain/users/users.ts';
import { BlobNotFoundError, type BlobStore } from '../../blobs/blob-store.ts';
import { DIGEST, noSuchFile } from '../../domain/files/files.ts';
import type { DownloadSigner } from '../../blobs/signed-urls.ts';
import type { ReadStore } from '../../projections/read-store.ts';
import { findFile, getFileMetadata, getFileTags, requireFile } from '../../queries/file-api.ts';
import { decideRange, ifRangeAllows, noneMatch } from '../byte-range.ts';
import { contentDisposition } from '../content-disposition.ts';
import { HttpError, badRequest, forbidden } from '../errors.ts';
import { apiKeyAuth, type KeyedState, type PrincipalCache } from '../middleware/api-key-auth.ts';
import { jsonBody } from '../middleware/json-body.ts';
import type { FailureThrottle } from '../throttle.ts';
import { decodeBody, metadataOf, optionalProps } from '../validate.ts';

export interface FileApiDeps {
  readonly commands: CommandDeps;
  readonly reads: ReadStore;
  readonly throttle: FailureThrottle;
  readonly blobs: BlobStore;
  readonly signer: DownloadSigner;
  /** Limit of the JSON body of `POST /tags/<digest>`. */
  readonly bodyLimitBytes: number;
  /** Resolved API keys, shared with the other read APIs. */
  readonly principals?: PrincipalCache;
}

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const BAD_REQUEST = 'svc:api-v0:generic:bad-request';

const digestParam = (raw: string | undefined): string => {
  const digest = raw?.toLowerCase();
  if (digest === undefined || !DIGEST.test(digest)) {
    throw badRequest('Bad request (failed validation): the digest must be 64 hexadecimal characters', BAD_REQUEST);
  }
  return digest;
};

const fileSizeParam = (raw: string | string[] | undefined): number | undefined => {
  const value = single(raw);
  if (value === undefined) return undefined;
  const size = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(size)) throw badRequest('Bad request (failed validation): fileSize must be a non-negative integer', BAD_REQUEST);
  return size;
};

const ChangeTags = optionalProps('ChangeTags', { tags: t.record(t.string, t.union([t.string, t.null])) }, {});

/** The request bodies' codecs, for the OpenAPI document. */
export const fileApiBodies = { ChangeTags };

/**
 * File API v0. `GET /api/v0-file/metadata/<digest>[?fileSize=]` and `GET|POST /api/v0-file/tags/<digest>[?fileSize=]`
 * need an API key, as the other read APIs; `GET /api/v0-file/download/<digest>/<size>/<filename>?e=&s=`
 * needs only a valid signature.
 */
export const fileApiRoutes = (deps: FileApiDeps) => {
  const router = new Router<KeyedState>({ prefix: '/api/v0-file' });
  const auth = apiKeyAuth(deps.reads, deps.throttle, deps.principals);
  const queries = { reads: deps.reads, signer: deps.signer };
  // Refused before the body is read: a read key has no business sending one.
  const mayWriteTags: Middleware<KeyedState> = async (ctx, next) => {
    if (!(await keyMayWriteFileTags(deps.reads, ctx.state.principal.keyId))) {
      throw forbidden(`Changing file tags needs an API key issued for it (path restricted to ${FILE_TAGS_PATH}); this key is for reading`, 'svc:api-v0:file:not-permitted');
    }
    await next();
  };

  router.get('/metadata/:digest', auth, async (ctx) => {
    const found = await getFileMetadata(queries, ctx.state.principal.access, digestParam(ctx.params.digest), fileSizeParam(ctx.query.fileSize));
    ctx.body = { success: true, kind: 'svc:api-v0:file:metadata', ...found };
  });

  router.get('/tags/:digest', auth, async (ctx) => {
    const tags = await getFileTags(deps.reads, ctx.state.principal.access, digestParam(ctx.params.digest), fileSizeParam(ctx.query.fileSize));
    ctx.body = { success: true, kind: 'svc:api-v0:file:tags', tags };
  });

  router.post('/tags/:digest', auth, mayWriteTags, jsonBody(deps.bodyLimitBytes), async (ctx) => {
    const digest = digestParam(ctx.params.digest);
    const fileSize = fileSizeParam(ctx.query.fileSize);
    const { tags } = decodeBody(ChangeTags, ctx.request.body);
    const file = await requireFile(deps.reads, ctx.state.principal.access, digest, fileSize);
    const changed = await changeFileTags(deps.commands, metadataOf(ctx), { digest, fileSize: file.fileSize, changes: tags });
    ctx.body = { success: true, kind: 'svc:api-v0:file:tags', tags: changed.tags };
  });

  router.get('/download/:digest/:size/:filename', async (ctx) => {
    const { digest = '', size = '', filename = '' } = ctx.params;
    const verdict = deps.signer.verify({ digest, fileSize: size, filename }, single(ctx.query.e), single(ctx.query.s));
    if (!verdict.ok) {
      throw verdict.reason === 'expired'
        ? forbidden('This download URL has expired; ask the File API for a new one', 'svc:api-v0:file:download-expired')
        : forbidden('This download URL is not valid', 'svc:api-v0:file:invalid-download-url');
    }
    const file = await findFile(deps.reads, digest, Number(size));
    if (!file) throw noSuchFile(digest, Number(size));

    const etag = `"${file.digest}"`;
    ctx.set('ETag', etag);
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Cache-Control', 'private, no-transform');
    if (noneMatch(ctx.get('If-None-Match') || undefined, etag)) {
      ctx.status = 304;
      return;
    }
    const decision = ifRangeAllows(ctx.get('If-Range') || undefined, etag) ? decideRange(ctx.get('Range') || undefined, file.fileSize) : { kind: 'full' as const };
    if (decision.kind === 'unsatisfiable') {
      throw new HttpError(416, 'svc:api-v0:file:range-not-satisfiable', `The requested range is not inside the file of ${file.fileSize} bytes`, {
        'Content-Range': `bytes */${file.fileSize}`,
      });
    }
    const range = decision.kind === 'partial' ? { start: decision.start, end: decision.end } : undefined;
    const length = range ? range.end - range.start + 1 : file.fileSize;

    let body;
    if (ctx.method === 'HEAD') body = Buffer.alloc(0);
    else {
      try {
        body = await deps.blobs.get({ digest: file.digest, size: file.fileSize }, range);
      } catch (e) {
        if (!(e instanceof BlobNotFoundError)) throw e;
        ctx.state.log.error({ digest: file.digest, fileSize: file.fileSize }, 'a recorded file has no bytes in the blob store');
        throw noSuchFile(file.digest, file.fileSize);
      }
    }
    ctx.status = range ? 206 : 200;
    ctx.set('Content-Type', file.mimeType);
    ctx.set('Content-Disposition', contentDisposition(filename));
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (range) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${file.fileSize}`);
    ctx.body = body;
    ctx.length = length;
  });
  // A download URL with parts missing or added is as invalid as one with parts changed.
  router.get('/download/*rest', () => {
    throw forbidden('This download URL is not valid', 'svc:api-v0:file:invalid-download-url');
  });

  return router;
};
