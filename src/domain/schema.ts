/**
 * The store's schema: object types, attributes, qualifiers and labels, loaded from
 * `config/schema.json` (see load-schema.ts). Every item has an API code (`ns:kind:name`) and a
 * ref derived from that code, so schema items can be linked to like objects.
 */

export const VALUE_TYPES = [
  'text',
  'text-paragraph',
  'text-multiline',
  'datetime',
  'integer',
  'number',
  'link',
  'email-address',
  'url',
  'telephone-number',
  'person-name',
  'postal-address',
  'isbn',
  'uuid',
  'postcode',
  'configuration-name',
  'json',
  'file',
] as const;
export type ValueType = (typeof VALUE_TYPES)[number];

/** The data type of an attribute group: its values are held by its member attributes (see AttributeDef). */
export const ATTRIBUTE_GROUP = 'attribute-group';
export type AttributeDataType = ValueType | typeof ATTRIBUTE_GROUP;

export interface TypeDef {
  readonly code: string;
  readonly name: string;
  readonly ref: string;
  /** Code of the parent type; absent for root types. */
  readonly parent?: string;
  /** Code of the root of this type's parent chain (itself for a root type). */
  readonly rootCode: string;
  readonly annotations: readonly string[];
  /** Optional behaviour code (a stable code that clients and mappings use to find this type). */
  readonly behaviour?: string;
  /** Attribute codes an object of this type may have, inherited ones first, in display order. */
  readonly attributes: readonly string[];
}

export interface AttributeDef {
  readonly code: string;
  readonly name: string;
  readonly ref: string;
  readonly dataType: AttributeDataType;
  /** For `link` attributes: type codes a value may link to (subtypes included); empty = any type. */
  readonly linkTypes: readonly string[];
  /**
   * For attribute groups (`dataType` "attribute-group"): the member attributes, in order. A group
   * holds no values itself: an instance of it is the set of member values whose `extension` has
   * this attribute's code as `desc` and the same `groupId` (haplo-behaviour.md §5.4).
   */
  readonly groupAttributes?: readonly string[];
}

export interface QualifierDef {
  readonly code: string;
  readonly name: string;
  readonly ref: string;
}

export interface LabelDef {
  readonly code: string;
  readonly name: string;
  readonly ref: string;
}

export interface Schema {
  readonly types: ReadonlyMap<string, TypeDef>;
  readonly attributes: ReadonlyMap<string, AttributeDef>;
  readonly qualifiers: ReadonlyMap<string, QualifierDef>;
  readonly labels: ReadonlyMap<string, LabelDef>;
  /** True when `typeCode` is `ancestorCode` or one of its descendants. */
  isKindOf(typeCode: string, ancestorCode: string): boolean;
  /** The type and all its descendants. */
  typeAndSubtypes(code: string): readonly TypeDef[];
  /** Attribute groups of a type (its attributes of data type "attribute-group"), in display order. */
  groupsOfType(typeCode: string): readonly AttributeDef[];
  /** Any schema item (type, attribute, qualifier, label) by its ref. */
  byRef(ref: string): TypeDef | AttributeDef | QualifierDef | LabelDef | undefined;
}

export const TITLE = 'dc:attribute:title';
export const TYPE = 'dc:attribute:type';
export const PARENT = 'svc:attribute:parent';
export const BEHAVIOUR = 'svc:attribute:configured-behaviour';
