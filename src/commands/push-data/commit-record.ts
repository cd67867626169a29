import { objectStream, type DependentClaimEvent, type ObjectEvent } from '../../domain/objects/events.ts';
import { objectDecider } from '../../domain/objects/object.ts';
import type { AttributeValue } from '../../domain/objects/values.ts';
import { TITLE, TYPE, type Schema } from '../../domain/schema.ts';
import type { ExpectedRevision } from '../../events/event-store.ts';
import type { DomainEvent } from '../appending/run-command.ts';
import { userStream } from '../../domain/users/events.ts';
import { USERNAME, userDecider, type User } from '../../domain/users/users.ts';
import type { ModelDef } from '../../domain/model.ts';
import type { DictionaryTarget, ObjectTarget, Target } from './targets.ts';

export interface SaveAction {
  readonly kind: 'object:save';
  readonly destination: string;
  readonly ref: string;
  readonly new: boolean;
}

export interface PlannedAppend {
  readonly stream: string;
  readonly events: readonly DomainEvent[];
  readonly expectedRevision: ExpectedRevision;
}

/**
 * Everything one complete record writes: appended together, or not at all where the engine is atomic. Where it
 * appends stream after stream (KurrentDB before 25.1), the order is what keeps a lost race from leaving anything
 * behind: first the appends that can lose a race (a dependent's claim, a user, updates of existing objects), last
 * the new objects, whose fresh streams only this record writes. A stop in between leaves a claim or a user naming
 * an object that is not there yet, which the next commit of that record makes under the same ref.
 */
export interface RecordCommit {
  readonly appends: readonly PlannedAppend[];
  readonly actions: readonly SaveAction[];
}

export interface CommitHost {
  readonly schema: Schema;
  readonly model: ModelDef;
  readonly labels: readonly string[];
  loadUser(username: string): Promise<{ state: User | null; revision: number }>;
  groupExists(code: string): Promise<boolean>;
}

/** A problem found while committing: the record fails with this message. */
export class CommitError extends Error {}

const expected = (revision: number): ExpectedRevision => (revision < 0 ? 'no_stream' : revision);

const withTypeAndLink = (host: CommitHost, target: ObjectTarget): Record<string, readonly AttributeValue[]> => {
  const def = host.model.destinations.find((d) => d.name === target.destination);
  const attributes = { ...target.attributes };
  if (!attributes[TYPE]?.length) {
    if (!def?.objectType) throw new CommitError('annotatedTypes used but target has no type defined');
    attributes[TYPE] = [{ type: 'link', ref: host.schema.types.get(def.objectType)!.ref }];
  }
  const link = target.parentLink;
  if (link && !attributes[link.attribute]?.some((v) => v.type === 'link' && v.ref === link.ref)) {
    attributes[link.attribute] = [...(attributes[link.attribute] ?? []), { type: 'link', ref: link.ref }];
  }
  return attributes;
};

const commitObject = (host: CommitHost, target: ObjectTarget): { claim?: PlannedAppend; object?: PlannedAppend; action?: SaveAction } => {
  const attributes = withTypeAndLink(host, target);
  let events: readonly ObjectEvent[];
  try {
    const decider = objectDecider(host.schema);
    const alsoOf = host.model.destinations.find((d) => d.name === target.destination)?.annotatedTypes ?? [];
    events = target.loaded
      ? decider.decide({ type: 'SetObjectAttributes', ref: target.ref, attributes, alsoOf }, target.loaded)
      : decider.decide({ type: 'CreateObject', ref: target.ref, attributes, labels: host.labels, alsoOf }, null);
  } catch (e) {
    throw new CommitError(`${(e as Error).message} in object ${target.destination}`);
  }
  if (events.length === 0) return {};
  const object: PlannedAppend = { stream: objectStream(target.ref), events, expectedRevision: expected(target.revision) };
  const action: SaveAction = { kind: 'object:save', destination: target.destination, ref: target.ref, new: !target.loaded };
  if (!target.claim || !target.parentLink) return { object, action };
  const claimed: DependentClaimEvent = {
    type: 'DependentObjectClaimed',
    data: { parent: target.parentLink.ref, attribute: target.parentLink.attribute, objectType: events[0]!.type === 'ObjectCreated' ? events[0]!.data.objectType : '', ref: target.ref },
  };
  return { claim: { stream: target.claim.stream, events: [claimed], expectedRevision: expected(target.claim.revision) }, object, action };
};

const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** User sync: the `user` dictionary creates or updates a user whose profile is the record's `profile` object. */
const commitUser = async (host: CommitHost, user: DictionaryTarget, profile: ObjectTarget | undefined, tags: DictionaryTarget | undefined): Promise<PlannedAppend[]> => {
  const username = String(user.values.username).toLowerCase();
  if (!USERNAME.test(username)) throw new CommitError(`Invalid username: ${username} (1-64 characters of a-z, 0-9, . _ @ -, starting with a letter or digit)`);
  const groups = ((user.values.groups as unknown[] | undefined) ?? []).map(String);
  for (const g of groups) if (!(await host.groupExists(g))) throw new CommitError(`Unknown group ${g} for user ${username}`);
  const tagValues = tags ? Object.fromEntries(Object.entries(tags.values).flatMap(([k, v]) => (v === undefined || v === null ? [] : [[k, String(v)]]))) : undefined;
  const email = text(user.values.email);
  const { state, revision } = await host.loadUser(username);
  const events = state
    ? userDecider.decide({ type: 'ChangeUser', username, ...(email ? { email } : {}), groups, ...(tagValues ? { tags: tagValues } : {}) }, state)
    : userDecider.decide({ type: 'CreateUser', username, ...(email ? { email } : {}), ...(profile ? { profileRef: profile.ref } : {}), groups, ...(tagValues ? { tags: tagValues } : {}) }, null);
  return events.length ? [{ stream: userStream(username), events, expectedRevision: expected(revision) }] : [];
};

/**
 * A user-sync profile carries the user's name, and is titled with it: new profiles, and existing ones
 * whose title the record did not set itself (so a changed name changes the title too).
 */
const nameProfile = (host: CommitHost, user: DictionaryTarget, profile: ObjectTarget) => {
  const first = text(user.values.nameFirst);
  const last = text(user.values.nameLast);
  const title = text(user.values.title);
  if (!first && !last) return;
  const current = profile.attributes[TITLE];
  const titleSetByRecord = profile.loaded ? JSON.stringify(current ?? []) !== JSON.stringify(profile.loaded.attributes[TITLE] ?? []) : (current?.length ?? 0) > 0;
  if (!titleSetByRecord) profile.attributes[TITLE] = [{ type: 'text', value: [first, last].filter(Boolean).join(' ') }];
  if (host.schema.attributes.has('svc:attribute:name')) {
    profile.attributes['svc:attribute:name'] = [
      { type: 'person-name', value: { ...(title ? { title } : {}), ...(first ? { first } : {}), ...(last ? { last } : {}), culture: 'western' } },
    ];
  }
};

/** Plans the writes of a complete record: object saves (unchanged objects write nothing) and dictionary commits. */
export const planRecordCommit = async (host: CommitHost, targets: readonly Target[]): Promise<RecordCommit> => {
  const appends: PlannedAppend[] = [];
  const created: PlannedAppend[] = [];
  const actions: SaveAction[] = [];
  const byDestination = new Map(targets.map((t) => [t.destination, t]));
  const userTarget = targets.find((t) => t.kind === 'dictionary' && host.model.destinations.find((d) => d.name === t.destination)?.commit === 'user-sync-user') as
    | DictionaryTarget
    | undefined;
  const profile = userTarget ? (targets.find((t) => t.kind === 'object' && host.model.destinations.find((d) => d.name === t.destination)?.depends === userTarget.destination) as ObjectTarget | undefined) : undefined;
  if (userTarget && profile) nameProfile(host, userTarget, profile);
  for (const target of targets) {
    if (target.kind === 'object') {
      const planned = commitObject(host, target);
      if (planned.claim) appends.push(planned.claim);
      if (planned.object) (target.loaded ? appends : created).push(planned.object);
      if (planned.action) actions.push(planned.action);
      continue;
    }
    const def = host.model.destinations.find((d) => d.name === target.destination);
    if (def?.commit === 'user-sync-user') {
      const tags = [...byDestination.values()].find((t) => host.model.destinations.find((d) => d.name === t.destination)?.commit === 'user-sync-tags') as DictionaryTarget | undefined;
      appends.push(...(await commitUser(host, target, profile, tags)));
    } else if (def?.commit !== 'user-sync-tags') {
      throw new CommitError(`Delegate for ${target.destination} does not implement commit()`);
    }
  }
  return { appends: [...appends, ...created], actions };
};
