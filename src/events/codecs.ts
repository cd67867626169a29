import * as t from 'io-ts';
import type { EventCodec } from './decode.ts';
import type { EventCodecs } from '../domain/decider.ts';
import { dependentClaimEventCodecs, objectEventCodecs } from '../domain/objects/events.ts';
import { apiKeyEventCodecs, groupEventCodecs, userEventCodecs } from '../domain/users/events.ts';
import { workUnitEventCodecs } from '../domain/work-units.ts';
import { restApiEventCodecs } from '../domain/rest-apis.ts';
import { fileEventCodecs } from '../domain/files/events.ts';

/** Schema version 1 of every event type in `codecs`. */
const version1 = (codecs: EventCodecs): Record<string, EventCodec> =>
  Object.fromEntries(Object.entries(codecs).map(([type, codec]) => [type, { codec, version: 1 }]));

/** Events of the idempotency slots of API requests (commands/idempotency.ts). */
const idempotencyEventCodecs = {
  /** `leaseUntil`: when a retry may take the key over unless renewed (absent on slots started before leases). */
  IdempotentRequestStarted: t.intersection([t.type({ bodyHash: t.string }), t.partial({ leaseUntil: t.string })]),
  IdempotentRequestRenewed: t.type({ leaseUntil: t.string }),
  IdempotentRequestReleased: t.type({}),
  IdempotentRequestCompleted: t.type({ status: t.number, contentType: t.string, body: t.string }),
};

/**
 * Codecs of every domain event type this service writes, with each type's current schema version
 * and upcasters from older ones. The shapes are the domain's (src/domain); only versions live here.
 */
export const domainCodecs: Record<string, EventCodec> = {
  ...version1(objectEventCodecs),
  ...version1(dependentClaimEventCodecs),
  ...version1(userEventCodecs),
  /**
   * Version 1 (before groups and service users existed) had only username, email and profileRef;
   * version 2 added `groups` and `service`. Version 1 events read back as version 2 with defaults.
   */
  UserCreated: {
    codec: userEventCodecs.UserCreated,
    version: 2,
    upcasters: { 1: (data) => ({ groups: [], service: false, ...(data as object) }) },
  },
  ...version1(groupEventCodecs),
  ...version1(apiKeyEventCodecs),
  ...version1(workUnitEventCodecs),
  ...version1(restApiEventCodecs),
  ...version1(idempotencyEventCodecs),
  ...version1(fileEventCodecs),
};
