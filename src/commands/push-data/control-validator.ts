import type { Schema } from '../../domain/schema.ts';
import { filterNames } from './filters.ts';
import type { Models } from '../../domain/model.ts';
import { readerNames } from './readers.ts';
import { validateControlFile } from './validate-control.ts';

/** Validation of control files against this service's models, filters, readers and qualifiers. */
export const controlValidator = (models: Models, schema: Schema) => (control: unknown) =>
  validateControlFile(control, { models, filters: filterNames, readers: readerNames, qualifiers: [...schema.qualifiers.keys()] });
