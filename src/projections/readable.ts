import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { TITLE } from '../domain/schema.ts';
import type { Attributes, AttributeValue, PersonName, PostalAddress, Precision, TelephoneNumber } from '../domain/objects/values.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

const ordinal = (n: number) => {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${s}`;
};

/** A date at a precision, the way a person writes it: "12 Mar 2024", "Mar 2024", "2020s", "21st century". */
export const readableDate = (iso: string, precision: Precision): string => {
  const d = new Date(iso);
  const y = d.getUTCFullYear();
  const day = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${y}`;
  switch (precision) {
    case 'C': return `${ordinal(Math.floor(y / 100) + 1)} century`;
    case 'D': return `${y}s`;
    case 'Y': return String(y);
    case 'M': return `${MONTHS[d.getUTCMonth()]} ${y}`;
    case 'd': return day;
    case 'h': return `${day}, ${pad(d.getUTCHours())}:00`;
    case 'm': return `${day}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  }
};

/** The readable form of a datetime: its start, or "start to end" for a range (the end is exclusive). */
export const readableDatetime = (v: { start: string; end: string; precision: Precision; specifiedAsRange: boolean }): string => {
  if (!v.specifiedAsRange) return readableDate(v.start, v.precision);
  const lastIncluded = new Date(new Date(v.end).getTime() - 1).toISOString();
  return `${readableDate(v.start, v.precision)} to ${readableDate(lastIncluded, v.precision)}`;
};

export const readablePersonName = (n: PersonName): string => {
  const parts = n.culture === 'eastern' ? [n.last, n.first, n.middle] : n.culture === 'western_list' ? [n.last ? `${n.last},` : undefined, n.title, n.first, n.middle, n.suffix] : [n.title, n.first, n.middle, n.last, n.suffix];
  return parts.filter((p) => p).join(' ').replace(/,$/, '');
};

export const readablePostalAddress = (a: PostalAddress): string =>
  [a.street1, a.street2, a.city, a.county, a.postcode, a.country].filter((p) => p).join('\n');

export const readableTelephone = (t: TelephoneNumber): string => {
  const parsed = parsePhoneNumberFromString(t.number);
  const number = parsed ? parsed.formatInternational() : t.number;
  return t.extension ? `${number} ext. ${t.extension}` : number;
};

/** Text of a value for titles and reporting: strings as they are, structured values readable. */
export const valueText = (v: AttributeValue): string => {
  switch (v.type) {
    case 'datetime': return readableDatetime(v);
    case 'person-name': return readablePersonName(v.value);
    case 'postal-address': return readablePostalAddress(v.value);
    case 'telephone-number': return readableTelephone(v.value);
    case 'link': return v.ref;
    case 'file': return v.filename;
    case 'json': return JSON.stringify(v.value);
    default: return String(v.value);
  }
};

export const titleOf = (attributes: Attributes): string => {
  const first = attributes[TITLE]?.find((v) => v.qualifier === undefined) ?? attributes[TITLE]?.[0];
  return first ? valueText(first) : '';
};

/** URL slug of a title: lower case, words joined by hyphens, at most 64 characters. */
export const slug = (title: string): string =>
  title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
