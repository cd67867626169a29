/** Store-object events and values for projection specs, under the service's own schema (config/schema.json). */
import { fileURLToPath } from 'node:url';
import { loadSchema } from '../../src/app/load-schema.ts';
import { objectStream, type ObjectEvent } from '../../src/domain/objects/events.ts';
import type { Attributes, AttributeValue } from '../../src/domain/objects/values.ts';
import { TYPE } from '../../src/domain/schema.ts';
import type { GivenEvent } from '../support/projection-spec.ts';

export const schema = loadSchema(fileURLToPath(new URL('../../config/schema.json', import.meta.url)));

export const typeRef = (code: string): string => schema.types.get(code)!.ref;
export const text = (value: string, qualifier?: string): AttributeValue => ({ type: 'text', value, ...(qualifier ? { qualifier } : {}) });
export const link = (ref: string, qualifier?: string): AttributeValue => ({ type: 'link', ref, ...(qualifier ? { qualifier } : {}) });

const inStream = (event: ObjectEvent): GivenEvent => ({ ...event, stream: objectStream(event.data.ref) });

/** Created with its type link (as the decider requires) followed by `attributes`. */
export const created = (ref: string, objectType: string, attributes: Attributes, labels: readonly string[] = []): GivenEvent =>
  inStream({ type: 'ObjectCreated', data: { ref, objectType, attributes: { [TYPE]: [link(typeRef(objectType))], ...attributes }, labels } });

export const changed = (ref: string, set: Attributes, more: { objectType?: string; labels?: readonly string[] } = {}): GivenEvent =>
  inStream({ type: 'ObjectAttributesChanged', data: { ref, set, ...more } });

export const relabelled = (ref: string, labels: readonly string[]): GivenEvent => inStream({ type: 'ObjectLabelsChanged', data: { ref, labels } });
export const deleted = (ref: string): GivenEvent => inStream({ type: 'ObjectDeleted', data: { ref } });
export const undeleted = (ref: string): GivenEvent => inStream({ type: 'ObjectUndeleted', data: { ref } });
