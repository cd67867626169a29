import * as t from 'io-ts';
import type { EventCodec } from './decode.ts';
import { fileEventCodecs } from '../domain/files/events.ts';

const str = t.string;
const opt = <P extends t.Props>(required: P, optional: t.Props) => t.intersection([t.type(required), t.partial(optional)]);
/** `extension` marks a member value of an attribute group instance (src/objects/values.ts GroupExtension). */
const qualified = t.partial({ qualifier: str, extension: t.type({ desc: str, groupId: t.number }) });

const textLike = t.keyof({
  text: null,
  'text-paragraph': null,
  'text-multiline': null,
  'email-address': null,
  url: null,
  isbn: null,
  uuid: null,
  postcode: null,
  'configuration-name': null,
});

export const AttributeValueCodec = t.intersection([
  qualified,
  t.union([
    t.type({ type: textLike, value: str }),
    t.type({ type: t.keyof({ integer: null, number: null }), value: t.number }),
    opt(
      { type: t.literal('datetime'), start: str, end: str, precision: t.keyof({ C: null, D: null, Y: null, M: null, d: null, h: null, m: null }), specifiedAsRange: t.boolean },
      { timezone: str },
    ),
    t.type({ type: t.literal('link'), ref: str }),
    t.type({ type: t.literal('telephone-number'), value: opt({ number: str }, { country: str, extension: str }) }),
    t.type({
      type: t.literal('person-name'),
      value: opt({ culture: t.keyof({ western: null, western_list: null, eastern: null }) }, { title: str, first: str, middle: str, last: str, suffix: str }),
    }),
    t.type({ type: t.literal('postal-address'), value: opt({ country: str }, { street1: str, street2: str, city: str, county: str, postcode: str }) }),
    t.type({ type: t.literal('json'), value: t.unknown }),
    t.type({ type: t.literal('file'), digest: str, fileSize: t.number, mimeType: str, filename: str }),
  ]),
]);

const Attributes = t.record(str, t.array(AttributeValueCodec));
const v1 = (codec: t.Mixed): EventCodec => ({ codec, version: 1 });

/** Codecs of every domain event type this service writes. */
export const domainCodecs: Record<string, EventCodec> = {
  ObjectCreated: v1(t.type({ ref: str, objectType: str, attributes: Attributes, labels: t.array(str) })),
  ObjectAttributesChanged: v1(opt({ ref: str, set: Attributes }, { objectType: str, labels: t.array(str) })),
  ObjectLabelsChanged: v1(t.type({ ref: str, labels: t.array(str) })),
  ObjectDeleted: v1(t.type({ ref: str })),
  ObjectUndeleted: v1(t.type({ ref: str })),
  /**
   * Version 1 (before groups and service users existed) had only username, email and profileRef;
   * version 2 added `groups` and `service`. Version 1 events read back as version 2 with defaults.
   */
  UserCreated: {
    codec: opt({ username: str, groups: t.array(str), service: t.boolean }, { email: str, profileRef: str, tags: t.record(str, str) }),
    version: 2,
    upcasters: { 1: (data) => ({ groups: [], service: false, ...(data as object) }) },
  },
  UserChanged: v1(opt({ username: str }, { email: str, active: t.boolean, groups: t.array(str), tags: t.record(str, str) })),
  DependentObjectClaimed: v1(t.type({ parent: str, attribute: str, objectType: str, ref: str })),
  GroupCreated: v1(t.type({ code: str, title: str, readAll: t.boolean, readLabels: t.array(str) })),
  GroupChanged: v1(opt({ code: str }, { title: str, readAll: t.boolean, readLabels: t.array(str) })),
  ApiKeyIssued: v1(t.type({ id: str, username: str, name: str, path: str, lookup: str, hash: str })),
  ApiKeyRevoked: v1(t.type({ id: str })),
  WorkUnitCreated: v1(
    opt(
      { id: str, ref: str, workType: str, state: str, deadline: t.union([str, t.null]), data: t.UnknownRecord, tags: t.record(str, str) },
      { openedAt: str },
    ),
  ),
  RestApiDefined: v1(t.type({ url: str, description: str, enabled: t.boolean, response: t.keyof({ JSON: null, XML: null }), control: t.UnknownRecord })),
  RestApiChanged: v1(opt({ url: str }, { description: str, enabled: t.boolean, response: t.keyof({ JSON: null, XML: null }), control: t.UnknownRecord })),
  IdempotentRequestStarted: v1(t.type({ bodyHash: str })),
  IdempotentRequestReleased: v1(t.type({})),
  IdempotentRequestCompleted: v1(t.type({ status: t.number, contentType: str, body: str })),
  WorkUnitTransitioned: v1(t.type({ id: str, state: str, closed: t.boolean })),
  FileStored: v1(fileEventCodecs.FileStored),
  FileTagsChanged: v1(fileEventCodecs.FileTagsChanged),
};
