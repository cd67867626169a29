import * as t from 'io-ts';
import { fileApiBodies } from '../../routes/file-api.ts';
import { API_KEY_REFUSALS, BUSY, JSON_BODY_REFUSALS, error } from '../answers.ts';
import { annotate } from '../json-schema.ts';
import type { Operation, Parameter } from '../operation.ts';
import { CollectionBody, CollectionsBody, FileBody, SerialisedObject } from '../shapes.ts';

const keyed = (tag: string, op: Omit<Operation, 'tag' | 'access'>): Operation => ({ ...op, tag, access: 'api-key', responses: { ...API_KEY_REFUSALS, ...op.responses } });
const query = (name: string, description: string, schema?: Parameter['schema']): Parameter => ({ name, in: 'query', description, ...(schema ? { schema } : {}) });

const AT = query('at', 'A past time (ISO 8601): the answer as it was then', { type: 'string', format: 'date-time' });
const SOURCES = query('sources', 'Comma-separated sources to include (std:workunit, std:workflow, std:username, ...)');
const REF = { ref: 'An object ref, e.g. 80000' };
const v0Error = (description: string) => error(description);
const Results = t.type({ count: t.number, start: t.number, end: t.number, more: t.boolean });

/** Object API v0 (`/api/v0-object`), API key. */
export const objectApiOperations: readonly Operation[] = [
  keyed('object-api', {
    method: 'get',
    path: '/api/v0-object/ref/:ref',
    summary: 'One object, now or at a past time',
    pathParams: REF,
    parameters: [SOURCES, AT],
    responses: {
      200: { description: 'The object', codec: t.type({ success: t.literal(true), kind: t.literal('svc:api-v0:object:serialised'), object: SerialisedObject }) },
      400: v0Error('Not a ref, a bad at, or no such object readable by this key (svc:api-v0:object:no-such-object)'),
    },
  }),
  keyed('object-api', {
    method: 'get',
    path: '/api/v0-object/linked/:ref',
    summary: 'Objects that link to an object (refs, or serialised objects), a page at a time',
    pathParams: REF,
    parameters: [
      query('type', 'Only linking objects of this type (or a subtype)'),
      query('attribute', 'Only links through this attribute'),
      query('qualifier', 'Only links with this qualifier'),
      query('results', 'refs (default) or objects', { type: 'string', enum: ['refs', 'objects'] }),
      SOURCES,
      query('start', 'Index of the first result', { type: 'string', pattern: '^[0-9]+$' }),
    ],
    responses: {
      200: {
        description: 'A page of results',
        codec: t.intersection([
          t.type({ success: t.literal(true), kind: t.literal('svc:api-v0:object:store-query-results'), results: Results }),
          t.partial({ refs: t.readonlyArray(t.string), objects: t.readonlyArray(SerialisedObject) }),
        ]),
      },
      400: v0Error('Not a ref, an unknown type, attribute, qualifier or results option, a bad start, or no such object'),
    },
  }),
  keyed('object-api', {
    method: 'get',
    path: '/api/v0-object/history/:ref',
    summary: 'Every version of an object: time, actor, correlation id, event, what changed',
    pathParams: REF,
    responses: {
      200: {
        description: 'The versions, oldest first',
        codec: t.type({
          success: t.literal(true),
          kind: t.literal('svc:api-v0:object:history'),
          ref: t.string,
          versions: t.readonlyArray(
            t.intersection([
              t.type({
                recordVersion: t.number,
                time: annotate(t.string, { format: 'date-time' }),
                actor: t.union([t.string, t.null]),
                correlationId: t.union([t.string, t.null]),
                event: t.string,
                attributes: t.readonlyArray(t.string),
                labels: t.UnknownRecord,
              }),
              t.partial({ type: t.type({ from: t.string, to: t.string }) }),
            ]),
          ),
        }),
      },
      400: v0Error('Not a ref, or no such object readable by this key'),
    },
  }),
];

/** Reporting API v0 (`/api/reporting/v0`), API key. */
export const reportingOperations: readonly Operation[] = [
  keyed('reporting', { method: 'get', path: '/api/reporting/v0/collections', summary: 'Every collection', responses: { 200: { description: 'Collections', codec: CollectionsBody } } }),
  keyed('reporting', {
    method: 'get',
    path: '/api/reporting/v0/collection/:name',
    summary: 'One collection: its facts, status and data URL',
    pathParams: { name: 'A collection name' },
    responses: { 200: { description: 'The collection', codec: CollectionBody }, 404: error('No such collection') },
  }),
  keyed('reporting', {
    method: 'get',
    path: '/api/reporting/v0/collection-data/:name',
    summary: 'A collection\'s rows (the rows readable by this key), now or at a past time',
    pathParams: { name: 'A collection name' },
    parameters: [AT],
    responses: {
      200: {
        description: 'Columns ["ref", "objectTitle", …facts] and one row per object',
        codec: t.intersection([
          t.type({
            name: t.string,
            status: t.keyof({ ready: null, updating: null }),
            at: annotate(t.string, { format: 'date-time' }),
            columns: t.readonlyArray(t.string),
            rows: t.readonlyArray(t.UnknownArray),
          }),
          t.partial({ objects: t.UnknownRecord }),
        ]),
      },
      400: error('A bad at'),
      404: error('No such collection'),
    },
  }),
];

const DIGEST = { digest: 'The file\'s SHA-256, 64 hexadecimal characters' };
const FILE_SIZE = query('fileSize', 'The file\'s size in bytes (when two files share a digest)', { type: 'string', pattern: '^[0-9]+$' });
const Tags = t.type({ success: t.literal(true), kind: t.literal('svc:api-v0:file:tags'), tags: t.record(t.string, t.string) });

/** File API v0 (`/api/v0-file`): metadata and tags with an API key, downloads by signed URL. */
export const fileApiOperations: readonly Operation[] = [
  keyed('file-api', {
    method: 'get',
    path: '/api/v0-file/metadata/:digest',
    summary: 'A file\'s metadata and a signed, time-limited download URL',
    pathParams: DIGEST,
    parameters: [FILE_SIZE],
    responses: {
      200: {
        description: 'The file',
        codec: t.type({
          success: t.literal(true),
          kind: t.literal('svc:api-v0:file:metadata'),
          file: FileBody,
          download: t.type({ url: t.string, validUntil: annotate(t.string, { format: 'date-time' }) }),
        }),
      },
      400: error('A bad digest or fileSize'),
      404: error('No such file readable by this key'),
    },
  }),
  keyed('file-api', {
    method: 'get',
    path: '/api/v0-file/tags/:digest',
    summary: 'A file\'s tags',
    pathParams: DIGEST,
    parameters: [FILE_SIZE],
    responses: { 200: { description: 'The tags', codec: Tags }, 400: error('A bad digest or fileSize'), 404: error('No such file readable by this key') },
  }),
  keyed('file-api', {
    method: 'post',
    path: '/api/v0-file/tags/:digest',
    summary: 'Set or remove (null) a file\'s tags; needs a key issued for file tags',
    pathParams: DIGEST,
    parameters: [FILE_SIZE],
    body: { codec: fileApiBodies.ChangeTags },
    responses: {
      ...JSON_BODY_REFUSALS,
      200: { description: 'The tags as changed', codec: Tags },
      403: error('A read key (not issued for file tags), or any refusal of the key'),
      404: error('No such file readable by this key'),
      ...BUSY,
    },
  }),
  {
    method: 'get',
    path: '/api/v0-file/download/:digest/:size/:filename',
    tag: 'file-api',
    access: 'public',
    summary: 'A file\'s bytes by the signed URL the metadata gave (Range, If-Range and If-None-Match honoured)',
    pathParams: { ...DIGEST, size: 'The file\'s size in bytes', filename: 'The file name for Content-Disposition' },
    parameters: [query('e', 'Expiry (signed)', { type: 'string' }), query('s', 'Signature', { type: 'string' })],
    responses: {
      200: { description: 'The file', contentType: '*/*', schema: { type: 'string', format: 'binary' } },
      206: { description: 'The requested range', contentType: '*/*', schema: { type: 'string', format: 'binary' } },
      304: { description: 'Not modified (If-None-Match)' },
      403: error('The URL has expired or is not valid'),
      404: error('No such file'),
      416: error('The range is not inside the file', { 'Content-Range': 'bytes */<size>' }),
    },
  },
  {
    method: 'get',
    path: '/api/v0-file/download/*rest',
    tag: 'file-api',
    access: 'public',
    summary: 'Any other download URL (parts missing or added): never valid',
    pathParams: { rest: 'Whatever follows /download/' },
    responses: { 403: error('This download URL is not valid') },
  },
];
