/**
 * The "Using it" example of a push-data API: a curl command that sends a file of records in the
 * format the API's control file reads. `--data-binary` because `--data` strips CR and LF, which
 * joins a TSV or CSV body into one line: the push then applies 0 records without a word.
 */
import type { ControlFile } from '../../../domain/control-file.ts';

export interface PushFormat {
  readonly contentType: string;
  /** The example's file of records. */
  readonly file: string;
}

/** What the control file's reader of the request body expects (files.body, else files.DEFAULT). */
export const pushFormatOf = (control: ControlFile): PushFormat => {
  const spec = control.files.body ?? control.files.DEFAULT;
  const charset = spec?.charset ? `; charset=${spec.charset}` : '';
  const read = spec?.read ?? 'json';
  if (read.startsWith('xml')) return { contentType: `application/xml${charset}`, file: 'records.xml' };
  if (read === 'tsv-with-name-row') {
    const separator = spec?.separator || '\t';
    if (separator === '\t') return { contentType: `text/tab-separated-values${charset}`, file: 'records.tsv' };
    if (separator === ',') return { contentType: `text/csv${charset}`, file: 'records.csv' };
    return { contentType: `text/plain${charset}`, file: 'records.txt' };
  }
  return { contentType: `application/json${charset}`, file: 'records.json' };
};

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The command; `key` is the key itself, or undefined for a `$API_KEY` placeholder. */
export const pushExample = (o: { control: ControlFile; endpoint: string; key?: string }): string => {
  const { contentType, file } = pushFormatOf(o.control);
  const user = o.key === undefined ? '"svc:$API_KEY"' : shellQuote(`svc:${o.key}`);
  return `curl -u ${user} -H ${shellQuote(`Content-Type: ${contentType}`)} --data-binary @${file} ${shellQuote(o.endpoint)}`;
};
