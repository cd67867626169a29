import { createHash } from 'node:crypto';
import { newRef } from '../new-ref.ts';
import { encodeRef } from '../../domain/objects/ref.ts';
import type { ObjectState } from '../../domain/objects/object.ts';
import { nextGroupId, TEXT_LIKE, type AttributeValue, type TextLikeType } from '../../domain/objects/values.ts';
import { valueText } from '../../projections/readable.ts';
import { TITLE, type Schema } from '../../domain/schema.ts';
import { RefValue, type Instruction } from '../../domain/control-file.ts';
import type { ValueConverter } from './convert.ts';
import { MAX_DEPENDENCY_DEPTH, type DestinationDef, type ModelDef, type NameDef } from '../../domain/model.ts';
import { dictionaryTarget, loadedObjectTarget, newObjectTarget, type ObjectTarget, type Target } from './targets.ts';

/** What a record's transformation needs from the batch around it. */
export interface TransformationHost {
  readonly schema: Schema;
  readonly model: ModelDef;
  /** Converter for a value-setting instruction; undefined when the instruction is disabled. */
  converter(instruction: Instruction, name: NameDef): ValueConverter | undefined;
  loadObject(ref: string): Promise<{ state: ObjectState; revision: number } | null>;
  /** The existing dependent object of `parentRef` for `destination`, and the claim to take when creating one. */
  findDependent(destination: DestinationDef, parentRef: string): Promise<{ ref?: string; claim: { stream: string; revision: number } }>;
  profileOfUser(username: string): Promise<string | undefined>;
  /** Called once per batch, the first time an object lacks a title. */
  titleHint(): void;
  /** Converted `set-value` constants of the batch: each is converted once per batch, not once per record. */
  readonly constants: Map<Instruction, Promise<unknown>>;
}

type Context = Readonly<Record<string, unknown>>;

/**
 * The ref of an object that one thing decides, made from that thing rather than at random: every process and every
 * retry that creates it chooses the same ref, so a retry after a lost race or a cut-off commit finds the object
 * the other one made (or is making) instead of starting a second one.
 */
const derivedRef = (seed: string): string => encodeRef(createHash('sha256').update(seed).digest());

/** A new dependent's ref: that of the claim it takes (its slot, and the claim revision it will have). */
const claimedRef = (claim: { readonly stream: string; readonly revision: number }): string => derivedRef(`${claim.stream}@${claim.revision + 1}`);

const present = (v: unknown) => Boolean(v) || v === 0;

/** A converted import value as a stored attribute value for `attribute`, or undefined if it does not fit. */
const toAttributeValue = (schema: Schema, attribute: string, value: unknown, qualifier: string | undefined): AttributeValue | undefined => {
  const def = schema.attributes.get(attribute);
  if (!def) return undefined;
  const q = qualifier ? { qualifier } : {};
  const typed = typeof value === 'object' && value !== null && !(value instanceof RefValue) ? (value as Record<string, unknown>) : undefined;
  switch (def.dataType) {
    case 'attribute-group':
      return undefined; // a group holds no values itself: see set-attribute-group
    case 'link':
      return value instanceof RefValue ? { type: 'link', ref: value.ref, ...q } : undefined;
    case 'json':
      return value instanceof RefValue ? undefined : { type: 'json', value, ...q };
    case 'integer':
    case 'number':
      return typeof value === 'number' ? { type: def.dataType, value, ...q } : undefined;
    case 'file': {
      const f = typed;
      if (!f || typeof f.digest !== 'string' || !/^[0-9a-f]{64}$/.test(f.digest) || typeof f.fileSize !== 'number') return undefined;
      return { type: 'file', digest: f.digest, fileSize: f.fileSize, mimeType: String(f.mimeType ?? 'application/octet-stream'), filename: String(f.filename ?? f.digest), ...q };
    }
    case 'datetime':
    case 'telephone-number':
    case 'person-name':
    case 'postal-address':
      return typed?.type === def.dataType ? ({ ...typed, ...q } as AttributeValue) : undefined;
    default:
      return typeof value === 'string' ? { type: def.dataType, value, ...q } : undefined;
  }
};

const STRUCTURED = new Set(['datetime', 'telephone-number', 'person-name', 'postal-address']);

/**
 * A converted value for `attribute` when its Name's type was overridden in the model (svc:person's title is a
 * person-name, as in Haplo's model): the Name's type governs the conversion, and a structured value stored in a
 * text attribute is its readable text ("Jane Smith"), since stored values have their attribute's type here.
 */
const toOverriddenValue = (schema: Schema, attribute: string, value: unknown, qualifier: string | undefined): AttributeValue | undefined => {
  const dataType = schema.attributes.get(attribute)?.dataType;
  if (!dataType || !TEXT_LIKE.includes(dataType as TextLikeType)) return undefined;
  const typed = typeof value === 'object' && value !== null && !(value instanceof RefValue) ? (value as { type?: unknown }) : undefined;
  const text =
    typed && typeof typed.type === 'string' && STRUCTURED.has(typed.type)
      ? valueText(typed as AttributeValue)
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : undefined;
  return text ? ({ type: dataType as TextLikeType, value: text, ...(qualifier ? { qualifier } : {}) }) : undefined;
};

/** `remove-values` of an attribute group: removes every instance of the group (the member values marked with it). */
const removeGroupInstances = (attributes: Record<string, readonly AttributeValue[]>, group: string): void => {
  for (const [code, values] of Object.entries(attributes)) {
    const kept = values.filter((v) => v.extension?.desc !== group);
    if (kept.length === 0) delete attributes[code];
    else attributes[code] = kept;
  }
};

/**
 * The transformation of one record (haplo-behaviour.md §3.5, §3.6): runs the instructions against
 * the record, making destinations ready on demand, and ends with the end-of-record checks. It never
 * writes: `targetsToCommit()` is what the caller saves, all together, if the record is complete.
 */
export class Transformation {
  readonly targets = new Map<string, Target>();
  /** Targets replaced by `new`/`load` before the end of the record; committed with the rest. */
  readonly queued: Target[] = [];
  complete = true;
  aborted = false;

  constructor(
    private readonly host: TransformationHost,
    readonly errors: (message: string) => void,
  ) {}

  private destination(name: string): DestinationDef | undefined {
    return this.host.model.destinations.find((d) => d.name === name);
  }

  private nameDef(destination: string, name: string): NameDef | undefined {
    return this.destination(destination)?.names.find((n) => n.name === name);
  }

  abort(message: string): void {
    this.errors(message);
    this.complete = false;
    this.aborted = true;
  }

  /**
   * As Haplo, an aborted record goes on to its last instruction (nothing of it is committed), so every problem
   * of the record is reported, not only the first.
   */
  async run(instructions: readonly Instruction[] | undefined, context: Context): Promise<void> {
    for (const instruction of instructions ?? []) await this.exec(instruction, context);
  }

  private async exec(ins: Instruction, context: Context): Promise<void> {
    const action = ins.action ?? 'field';
    switch (action) {
      case 'field': {
        const input = context[ins.source!];
        if (!present(input)) return;
        return this.assign(ins, ins.destination!, ins.name!, input);
      }
      case 'set-value':
        return this.assign(ins, ins.destination!, ins.name!, ins.value, true);
      case 'field-structured': {
        const structured = this.targets.get(ins.structured!);
        this.targets.delete(ins.structured!);
        if (!this.destination(ins.structured!)?.pseudo) {
          this.errors(`Unknown structured value destination in field-structured: ${ins.structured}`);
          return;
        }
        // Nothing collected is an empty value, converted (and reported) like any other, as Haplo's implicit empty target.
        return this.assign(ins, ins.destination!, ins.name!, structured?.kind === 'dictionary' ? { ...structured.values } : {});
      }
      case 'set-attribute-group':
        return this.setAttributeGroup(ins);
      case 'remove-values': {
        const target = await this.getTarget(ins.destination!);
        if (!target) return;
        if (target.kind === 'dictionary') delete target.values[ins.name!];
        else if (this.isGroup(ins.name!)) removeGroupInstances(target.attributes, ins.name!);
        else delete target.attributes[ins.name!];
        return;
      }
      case 'if-exists':
        return this.run(ins.source! in context && present(context[ins.source!]) ? ins.then : ins.else, context);
      case 'if-value-one-of':
        return this.run(ins.source! in context && (ins.values ?? []).includes(context[ins.source!]) ? ins.then : ins.else, context);
      case 'if-has-value': {
        const target = await this.getTarget(ins.destination!);
        if (!target) return;
        const has =
          target.kind === 'dictionary'
            ? ins.name! in target.values
            : this.isGroup(ins.name!)
              ? Object.values(target.attributes).some((values) => values.some((v) => v.extension?.desc === ins.name))
              : (target.attributes[ins.name!]?.length ?? 0) > 0;
        return this.run(has ? ins.then : ins.else, context);
      }
      case 'within': {
        const inner = context[ins.source!];
        if (inner && typeof inner === 'object') return this.run(ins.instructions, inner as Context);
        return;
      }
      case 'for-each': {
        const list = context[ins.source!];
        if (!list || typeof list !== 'object') return;
        for (const item of Array.isArray(list) ? list : Object.values(list)) {
          const inner = ins.wrapValues ? { value: item } : item;
          if (inner && typeof inner === 'object') await this.run(ins.instructions, inner as Context);
        }
        return;
      }
      case 'new': {
        const def = this.destination(ins.destination!);
        if (!def) return this.errors(`Unknown destination in new: ${ins.destination}`);
        // An additional dependent object (several books for one author) is linked to its parent like the first.
        let parentLink: ObjectTarget['parentLink'];
        if (def.kind === 'object' && def.depends && def.objectDependsWithAttribute) {
          const parent = await this.getTarget(def.depends, 1, def.name);
          if (!parent) return;
          if (parent.kind === 'object') parentLink = { attribute: def.objectDependsWithAttribute, ref: parent.ref };
        }
        this.queueCurrent(def.name);
        this.targets.set(def.name, def.kind === 'object' ? newObjectTarget(def.name, newRef(), parentLink ? { parentLink } : {}) : dictionaryTarget(def.name));
        return;
      }
      case 'load':
        return this.load(ins, context);
      case 'assert-destination': {
        const exists = await this.dependentExists(ins.destination!);
        if (exists === undefined) return;
        if (exists !== ins.exists) this.abort(`assert-destination failed: ${ins.destination}`);
        return;
      }
      case 'abort-record':
        return this.abort(ins.message ?? 'abort');
      case 'log-error':
        return this.errors(ins.message ?? 'error');
      default:
        return this.errors(`Unknown action in instruction: ${action}`);
    }
  }

  private async assign(ins: Instruction, destination: string, name: string, input: unknown, constant = false): Promise<void> {
    const def = this.nameDef(destination, name);
    if (!def) return this.errors(`Unknown name in ${ins.action ?? 'field'} ${name} for destination ${destination}`);
    const convert = this.host.converter(ins, def);
    if (!convert) return;
    let value: unknown;
    if (constant) {
      // set-value converts its constant once per batch and reuses the result.
      let cached = this.host.constants.get(ins);
      if (!cached) this.host.constants.set(ins, (cached = convert(input)));
      value = await cached;
    } else {
      value = await convert(input);
    }
    if (value === undefined) return;
    const target = await this.getTarget(destination);
    if (!target) return;
    if (target.kind === 'dictionary') {
      if (!def.multivalue) target.values[name] = value;
      else if (ins.multivalue) target.values[name] = [...((target.values[name] as unknown[] | undefined) ?? []), value];
      else target.values[name] = [value];
      return;
    }
    const stored = toAttributeValue(this.host.schema, name, value, ins.qualifier) ?? toOverriddenValue(this.host.schema, name, value, ins.qualifier);
    if (!stored) return;
    const current = target.attributes[name] ?? [];
    // Without multivalue a value replaces those of its qualifier; an unqualified one replaces them all (Haplo's remove
    // without a qualifier removes every value), so an unqualified single-value write leaves exactly one value.
    target.attributes[name] = ins.multivalue
      ? [...current, stored]
      : ins.qualifier === undefined
        ? [stored]
        : [...current.filter((v) => v.qualifier !== ins.qualifier), stored];
  }

  /**
   * `set-attribute-group`: the values collected in the attribute-group pseudo-destination `source`
   * (converted by its Names when set) become one new instance of the group `name` in the object
   * target of `destination`: each is appended to its member attribute with `extension: {desc: name,
   * groupId}`, groupId being the object's next free one. The pseudo-destination is always cleared;
   * when it holds no usable value, nothing is appended.
   */
  private async setAttributeGroup(ins: Instruction): Promise<void> {
    const source = this.destination(ins.source!);
    const collected = this.targets.get(ins.source!);
    this.targets.delete(ins.source!);
    if (!source?.pseudo || !source.attributeGroup) {
      this.errors(`Unknown attribute group source in set-attribute-group: ${ins.source}`);
      return;
    }
    const def = this.nameDef(ins.destination!, ins.name!);
    if (!def || def.type !== 'attribute-group') {
      return this.errors(`Unknown name in set-attribute-group ${ins.name} for destination ${ins.destination}`);
    }
    if (source.attributeGroup.destination !== ins.destination || source.attributeGroup.group !== ins.name) {
      this.errors(`Unknown attribute group source in set-attribute-group: ${ins.source}`);
      return;
    }
    if (!collected || collected.kind !== 'dictionary') return;
    const values: [string, AttributeValue][] = [];
    for (const member of source.names) {
      const raw = collected.values[member.name];
      for (const v of Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]) {
        const stored = toAttributeValue(this.host.schema, member.name, v, undefined);
        if (stored) values.push([member.name, stored]);
      }
    }
    if (values.length === 0) return;
    const target = await this.getTarget(ins.destination!);
    if (!target || target.kind !== 'object') return;
    const extension = { desc: ins.name!, groupId: nextGroupId(target.attributes) };
    for (const [member, value] of values) target.attributes[member] = [...(target.attributes[member] ?? []), { ...value, extension }];
  }

  private isGroup(attribute: string): boolean {
    return this.host.schema.attributes.get(attribute)?.dataType === 'attribute-group';
  }

  private queueCurrent(destination: string): void {
    const current = this.targets.get(destination);
    if (current) this.queued.push(current);
    this.targets.delete(destination);
  }

  private async load(ins: Instruction, context: Context): Promise<void> {
    const def = this.destination(ins.destination!);
    const using = this.targets.get(ins.using!);
    this.targets.delete(ins.using!);
    if (!def) return this.errors(`Unknown destination in load: ${ins.destination}`);
    this.queueCurrent(def.name);
    const ref = using?.kind === 'dictionary' ? using.values.ref : undefined;
    const loaded = ref instanceof RefValue && def.kind === 'object' ? await this.host.loadObject(ref.ref) : null;
    const types = def.objectType ? [def.objectType] : (def.annotatedTypes ?? []);
    if (loaded && !loaded.state.deleted && types.some((t) => this.host.schema.isKindOf(loaded.state.objectType, t))) {
      this.targets.set(def.name, loadedObjectTarget(def.name, loaded.state, loaded.revision));
      return;
    }
    if (ins.otherwise) return this.run(ins.otherwise, context);
    this.abort(`Couldn't load destination: ${def.name}`);
  }

  /** The target of a destination, making it ready if it can be; undefined (and the record aborted) if not. */
  async getTarget(name: string, depth = 0, usedBy?: string): Promise<Target | undefined> {
    const existing = this.targets.get(name);
    if (existing) return existing;
    const def = this.destination(name);
    if (!def) {
      this.abort(`Unknown destination: ${name}`);
      return undefined;
    }
    if (def.pseudo || (def.implicit && !def.depends)) {
      const target = def.kind === 'object' ? newObjectTarget(name, newRef()) : dictionaryTarget(name);
      this.targets.set(name, target);
      return target;
    }
    if (!def.depends) {
      this.abort(`Destination "${name}" needs be made ready with a "new" or "load" instruction${usedBy ? `, required by use of ${usedBy}` : ''}`);
      return this.blank(def);
    }
    if (depth >= MAX_DEPENDENCY_DEPTH) {
      this.abort('getTarget() maximum recursion limit exceeded');
      return undefined;
    }
    const parent = await this.getTarget(def.depends, depth + 1, usedBy ?? name);
    if (!parent) return undefined;
    const target = await this.provideDependent(def, parent);
    if (!target) {
      this.abort(`Couldn't make destination "${name}" available from dependency "${def.depends}"`);
      return this.blank(def);
    }
    this.targets.set(name, target);
    return target;
  }

  /**
   * The empty target an aborted record goes on with (as Haplo's fallback), so later instructions run without
   * reporting the same destination again; the record is never committed.
   */
  private blank(def: DestinationDef): Target {
    const target = def.kind === 'object' ? newObjectTarget(def.name, newRef()) : dictionaryTarget(def.name);
    this.targets.set(def.name, target);
    return target;
  }

  private async provideDependent(def: DestinationDef, parent: Target): Promise<Target | undefined> {
    if (def.kind === 'dictionary') return dictionaryTarget(def.name);
    if (parent.kind === 'object' && def.objectDependsWithAttribute) {
      const parentLink = { attribute: def.objectDependsWithAttribute, ref: parent.ref };
      const found = parent.loaded ? await this.host.findDependent(def, parent.ref) : undefined;
      if (found?.ref) {
        const loaded = await this.host.loadObject(found.ref);
        if (loaded && !loaded.state.deleted) return loadedObjectTarget(def.name, loaded.state, loaded.revision, { parentLink });
        // Claimed but never written: a commit that stopped between its claim and its object (on an engine that
        // appends stream after stream). The claim already names the ref: the object is made under it, unclaimed.
        if (!loaded && found.claim.revision >= 0) return newObjectTarget(def.name, found.ref, { parentLink });
      }
      const claim = found?.claim ?? (await this.host.findDependent(def, parent.ref)).claim;
      return newObjectTarget(def.name, claimedRef(claim), { parentLink, claim });
    }
    if (parent.kind === 'dictionary' && def.implicit) {
      // User sync: the profile of the user being synchronised, or a new one.
      const username = typeof parent.values.username === 'string' ? parent.values.username.toLowerCase() : undefined;
      const known = username ? await this.host.profileOfUser(username) : undefined;
      // A user's profile named but not there (a commit cut off after the user) is made under that ref; a new
      // user's profile ref is derived from the username, so the retry after a lost race on the user finds the
      // winner's profile even before the users read model shows it.
      const ref = known ?? (username ? derivedRef(`profile:${username}`) : newRef());
      const loaded = await this.host.loadObject(ref);
      return loaded ? loadedObjectTarget(def.name, loaded.state, loaded.revision) : newObjectTarget(def.name, ref);
    }
    return undefined;
  }

  /**
   * Whether a dependent destination is (or could be loaded as) an existing target. Haplo answers
   * "true" for any object destination that would create a new object; this answers whether one exists.
   */
  private async dependentExists(name: string): Promise<boolean | undefined> {
    if (this.targets.has(name)) return true;
    const def = this.destination(name);
    if (!def?.depends) {
      this.errors(`Can only use dependent destinations in assert-destination: ${name}`);
      return undefined;
    }
    const parent = await this.getTarget(def.depends, 1, name);
    if (!parent) return undefined;
    if (def.kind === 'object' && parent.kind === 'object' && def.objectDependsWithAttribute && parent.loaded) {
      return (await this.host.findDependent(def, parent.ref)).ref !== undefined;
    }
    return false;
  }

  /** End-of-record checks (§3.5); marks the record incomplete on any failure. */
  async finish(): Promise<void> {
    if (this.aborted) return;
    // Implicit destinations (user sync) are always ready: a user always gets its profile, even when
    // the control file sets nothing in it.
    for (const def of this.host.model.destinations) {
      if (!def.implicit || this.targets.has(def.name)) continue;
      await this.getTarget(def.name);
      if (this.aborted) return;
    }
    for (const def of this.host.model.destinations) {
      if (def.pseudo) continue;
      const target = this.targets.get(def.name);
      if (target || !def.optional) this.check(def, target);
    }
    for (const target of this.queued) {
      const def = this.destination(target.destination);
      if (def && !def.pseudo) this.check(def, target);
    }
  }

  /** The end-of-record check of one destination's target. */
  private check(def: DestinationDef, target: Target | undefined): void {
    if (!target) {
      this.errors(`No data set in required destination ${def.name}`);
      this.complete = false;
      return;
    }
    if (target.kind === 'dictionary') {
      const missing = def.names.filter((n) => n.required && !present(target.values[n.name])).map((n) => n.name).sort();
      if (missing.length) {
        this.errors(`Missing values in ${def.name}: ${missing.join(', ')}`);
        this.complete = false;
      }
      return;
    }
    const titleRequired = def.names.find((n) => n.name === TITLE)?.required ?? false;
    if (titleRequired && !(target.attributes[TITLE]?.length ?? 0) && !this.titledElsewhere(target)) {
      this.errors(`dc:attribute:title is not set in object ${def.name}`);
      this.host.titleHint();
      this.complete = false;
    }
  }

  /** User sync titles new profiles from the user's name when committing. */
  private titledElsewhere(target: ObjectTarget): boolean {
    return this.destination(target.destination)?.implicit === true;
  }

  /** Every non-pseudo target the record touched, queued ones first. */
  targetsToCommit(): Target[] {
    const pseudo = new Set(this.host.model.destinations.filter((d) => d.pseudo).map((d) => d.name));
    return [...this.queued, ...[...this.targets.values()].filter((t) => !pseudo.has(t.destination))].filter((t) => !pseudo.has(t.destination));
  }
}
