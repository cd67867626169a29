/** Control files (haplo-behaviour.md §3.2): how a batch of input records becomes store changes. */

export interface FileSpec {
  readonly read: string;
  readonly singleRecord?: boolean;
  readonly charset?: string;
  readonly separator?: string;
}

export interface RefMapping {
  readonly types?: readonly string[];
  readonly using: 'behaviour' | 'title';
  readonly values: Readonly<Record<string, string>>;
}

/** One instruction; which properties apply depends on `action` (default `field`). */
export interface Instruction {
  readonly action?: string;
  readonly source?: string;
  readonly destination?: string;
  readonly name?: string;
  readonly multivalue?: boolean;
  readonly qualifier?: string;
  readonly filters?: unknown;
  readonly mapInputValue?: Readonly<Record<string, unknown>>;
  readonly mapInputValueDefault?: unknown;
  readonly refMapping?: string;
  readonly dateFormat?: string;
  readonly country?: string;
  readonly trueValue?: string;
  readonly falseValue?: string;
  readonly structured?: string;
  readonly value?: unknown;
  readonly values?: readonly unknown[];
  readonly then?: readonly Instruction[];
  readonly else?: readonly Instruction[];
  readonly instructions?: readonly Instruction[];
  readonly wrapValues?: boolean;
  readonly using?: string;
  readonly otherwise?: readonly Instruction[];
  readonly exists?: boolean;
  readonly message?: string;
  readonly [other: string]: unknown;
}

export interface ControlFile {
  readonly dataImportControlFileVersion: number;
  readonly model: string;
  readonly files: Readonly<Record<string, FileSpec>>;
  readonly instructions: readonly Instruction[];
  readonly mapping?: Readonly<Record<string, RefMapping>>;
  readonly recordProcessor?: string;
}

/** A ref produced by a filter or mapping: only these are accepted by `ref` Names (plain strings are not). */
export class RefValue {
  constructor(readonly ref: string) {}
  toString(): string {
    return this.ref;
  }
}

/** Read-model look-ups that filters and mappings need. */
export interface ImportLookups {
  /** Ref of the profile object of the user with this (lower-cased) username. */
  profileRefByUsername(username: string): Promise<string | undefined>;
  profileRefByEmail(email: string): Promise<string | undefined>;
  /** Ref of the object whose configured behaviour (`svc:attribute:configured-behaviour`) is `code`. */
  refByBehaviour(code: string): Promise<string | undefined>;
  /** Every title of objects of these types (subtypes included), or 'too-many' beyond `limit` objects. */
  titlesOfTypes(types: readonly string[], limit: number): Promise<readonly { ref: string; titles: readonly string[] }[] | 'too-many'>;
}
