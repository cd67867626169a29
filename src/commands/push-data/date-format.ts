/**
 * Parsing dates with the Java `SimpleDateFormat` patterns that control files give in `dateFormat`
 * (haplo-behaviour.md §3.7, `datetime`). Only the pattern letters people use are supported; any other
 * letter makes `compileFormat` return an error, so the instruction can be disabled with a clear message
 * instead of silently mis-parsing.
 *
 * | Pattern | Meaning when parsing |
 * |---|---|
 * | `yyyy` (also `y`, `yyy`) | year, exactly 4 digits |
 * | `yy` | 2 digits, placed within 80 years before and 20 years after now (as Java); 4 digits are taken literally |
 * | `M`, `MM` | month number 1-12 (`M` 1-2 digits, `MM` 2 digits) |
 * | `MMM`, `MMMM` | English month name or 3-letter abbreviation (`Jan`, `January`), case-insensitive |
 * | `d`, `dd` | day of month, checked against the month's length |
 * | `H`, `HH` | hour 0-23 |
 * | `h`, `hh` with `a` | hour 1-12 with `AM`/`PM` (case-insensitive); without `a` the hour is AM |
 * | `m`, `mm`, `s`, `ss` | minute and second 0-59 |
 * | `S`, `SS`, `SSS` | milliseconds, exactly that many digits |
 * | `E` ... `EEEE` | English day name or abbreviation: matched, then ignored |
 * | `X`, `XX`, `XXX` | ISO 8601 zone: `Z` or `+01`, `+0100`, `+01:00` |
 * | `Z` (any count) | RFC 822 zone `+0100` (also accepts `+01:00`) |
 * | `'text'`, `''` | quoted literal text; `''` is one quote |
 * | anything else that is not a letter | itself, literally |
 *
 * Strictness (stricter than Java's `parse`, which ignores trailing text and accepts any number of
 * digits): the whole input must match; single-letter numeric fields take 1-2 digits and doubled ones
 * exactly 2 digits; every field is range-checked. Times without a zone are UTC; a date-only format
 * gives midnight UTC of that day. Missing fields default as in Java (year 1970, month 1, day 1, 00:00).
 */

export interface ParsedDate {
  readonly date: Date;
  /** True when the format has a time of day (any of `H`, `h`, `m`, `s`, `S`). */
  readonly hasTime: boolean;
}

export interface CompiledFormat {
  readonly format: string;
  readonly hasTime: boolean;
  parse(input: string): ParsedDate | undefined;
}

type Field = 'year' | 'year2' | 'month' | 'monthName' | 'day' | 'hour24' | 'hour12' | 'minute' | 'second' | 'millis' | 'ampm' | 'dayName' | 'zone';

interface Group {
  readonly field: Field;
  readonly token: string;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
/** A case-insensitive regex for an ASCII word, without making the whole pattern case-insensitive. */
const ci = (word: string): string => [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : escapeRegExp(c))).join('');
/** Full names first, then abbreviations; the anchored regex backtracks if needed. */
const namesRegExp = (names: readonly string[]): string => `(${[...names, ...names.map((n) => n.slice(0, 3))].map(ci).join('|')})`;

const LETTER = /[A-Za-z]/;

type Token = { readonly kind: 'literal'; readonly text: string } | { readonly kind: 'pattern'; readonly letter: string; readonly count: number };

const tokenize = (format: string): Token[] | { error: string } => {
  const tokens: Token[] = [];
  let literal = '';
  const flush = () => {
    if (literal) tokens.push({ kind: 'literal', text: literal });
    literal = '';
  };
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c === "'") {
      if (format[i + 1] === "'") {
        literal += "'";
        i += 2;
        continue;
      }
      // Quoted text up to the next lone quote; '' inside is one quote.
      let j = i + 1;
      for (;;) {
        if (j >= format.length) return { error: 'unterminated quote' };
        if (format[j] === "'") {
          if (format[j + 1] === "'") {
            literal += "'";
            j += 2;
            continue;
          }
          break;
        }
        literal += format[j];
        j++;
      }
      i = j + 1;
      continue;
    }
    if (LETTER.test(c)) {
      flush();
      let j = i;
      while (format[j] === c) j++;
      tokens.push({ kind: 'pattern', letter: c, count: j - i });
      i = j;
      continue;
    }
    literal += c;
    i++;
  }
  flush();
  return tokens;
};

const NUMERIC_LETTERS = new Set(['y', 'M', 'd', 'H', 'h', 'm', 's', 'S']);
const isNumericToken = (t: Token | undefined): boolean => t?.kind === 'pattern' && NUMERIC_LETTERS.has(t.letter) && !(t.letter === 'M' && t.count >= 3);

/** The regex and field of one pattern token; `abutting` when the next token is numeric too (fixed width then, as Java). */
const patternPart = (letter: string, count: number, abutting: boolean): { regex: string; field: Field } | { error: string } => {
  const token = letter.repeat(count);
  const numeric = (field: Field) => ({ regex: count === 1 && !abutting ? '(\\d{1,2})' : '(\\d{2})', field });
  const tooLong = { error: `pattern "${token}" is not supported` };
  switch (letter) {
    case 'y':
      if (count === 2) return { regex: abutting ? '(\\d{2})' : '(\\d{4}|\\d{2})', field: 'year2' };
      return count <= 4 ? { regex: '(\\d{4})', field: 'year' } : tooLong;
    case 'M':
      if (count >= 3) return { regex: namesRegExp(MONTHS), field: 'monthName' };
      return numeric('month');
    case 'd':
      return count <= 2 ? numeric('day') : tooLong;
    case 'H':
      return count <= 2 ? numeric('hour24') : tooLong;
    case 'h':
      return count <= 2 ? numeric('hour12') : tooLong;
    case 'm':
      return count <= 2 ? numeric('minute') : tooLong;
    case 's':
      return count <= 2 ? numeric('second') : tooLong;
    case 'S':
      return count <= 3 ? { regex: `(\\d{${count}})`, field: 'millis' } : tooLong;
    case 'a':
      return count === 1 ? { regex: `(${ci('AM')}|${ci('PM')})`, field: 'ampm' } : tooLong;
    case 'E':
      return count <= 4 ? { regex: namesRegExp(DAYS), field: 'dayName' } : tooLong;
    case 'X':
      if (count === 1) return { regex: '(Z|[+-]\\d{2})', field: 'zone' };
      if (count === 2) return { regex: '(Z|[+-]\\d{4})', field: 'zone' };
      if (count === 3) return { regex: '(Z|[+-]\\d{2}:\\d{2})', field: 'zone' };
      return tooLong;
    case 'Z':
      return { regex: '([+-]\\d{2}:?\\d{2})', field: 'zone' };
    default:
      return { error: `pattern letter '${letter}' is not supported` };
  }
};

const daysInMonth = (year: number, month: number): number => {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0); // day 0 of the next month: the last day of `month`
  return d.getUTCDate();
};

/** Java's two-digit year rule: within 80 years before and 20 years after now. */
const expandTwoDigitYear = (yy: number, now: Date): number => {
  const start = now.getUTCFullYear() - 80;
  let year = Math.floor(start / 100) * 100 + yy;
  if (year < start) year += 100;
  return year;
};

const zoneOffsetMinutes = (zone: string): number | undefined => {
  if (zone === 'Z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return undefined;
  const hours = Number(m[2]);
  const minutes = Number(m[3] ?? '0');
  if (hours > 18 || minutes > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
};

/**
 * Compiles a SimpleDateFormat pattern, or explains why it is not supported
 * (e.g. `pattern letter 'w' is not supported`, `unterminated quote`, `field "dd" appears more than once`).
 */
export const compileFormat = (format: string): CompiledFormat | { error: string } => {
  if (format === '') return { error: 'the format is empty' };
  const tokens = tokenize(format);
  if ('error' in tokens) return tokens;
  let regex = '^';
  const groups: Group[] = [];
  const seen = new Map<string, string>();
  for (const [i, t] of tokens.entries()) {
    if (t.kind === 'literal') {
      regex += escapeRegExp(t.text);
      continue;
    }
    const part = patternPart(t.letter, t.count, isNumericToken(t) && isNumericToken(tokens[i + 1]));
    if ('error' in part) return part;
    const token = t.letter.repeat(t.count);
    // One field per quantity: `yyyy` twice, or `H` with `h`, would leave it ambiguous.
    const slot = { year2: 'year', monthName: 'month', hour12: 'hour', hour24: 'hour' }[part.field as string] ?? part.field;
    const before = seen.get(slot);
    if (before !== undefined) return { error: `field "${token}" appears more than once (also "${before}")` };
    seen.set(slot, token);
    regex += part.regex;
    groups.push({ field: part.field, token });
  }
  regex += '$';
  const re = new RegExp(regex);
  const hasTime = groups.some((g) => ['hour24', 'hour12', 'minute', 'second', 'millis'].includes(g.field));

  const parse = (input: string): ParsedDate | undefined => {
    const m = re.exec(input);
    if (!m) return undefined;
    let year = 1970;
    let month = 1;
    let day = 1;
    let hour = 0;
    let hour12: number | undefined;
    let pm = false;
    let minute = 0;
    let second = 0;
    let millis = 0;
    let offset = 0;
    for (const [i, g] of groups.entries()) {
      const text = m[i + 1]!;
      const n = Number(text);
      switch (g.field) {
        case 'year': year = n; break;
        case 'year2': year = text.length === 2 ? expandTwoDigitYear(n, new Date()) : n; break;
        case 'month': month = n; break;
        case 'monthName': month = MONTHS.findIndex((name) => name.startsWith(text.toLowerCase())) + 1; break;
        case 'day': day = n; break;
        case 'hour24': if (n > 23) return undefined; hour = n; break;
        case 'hour12': if (n < 1 || n > 12) return undefined; hour12 = n; break;
        case 'minute': if (n > 59) return undefined; minute = n; break;
        case 'second': if (n > 59) return undefined; second = n; break;
        case 'millis': millis = n; break;
        case 'ampm': pm = text.toUpperCase() === 'PM'; break;
        case 'dayName': break;
        case 'zone': {
          const o = zoneOffsetMinutes(text);
          if (o === undefined) return undefined;
          offset = o;
          break;
        }
      }
    }
    if (hour12 !== undefined) hour = (hour12 % 12) + (pm ? 12 : 0);
    if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    if (hasTime) {
      date.setUTCHours(hour, minute, second, millis);
      date.setTime(date.getTime() - offset * 60_000);
    }
    return { date, hasTime };
  };
  return { format, hasTime, parse };
};

/**
 * Parses `input` with a SimpleDateFormat pattern; undefined when it does not match or a field is out
 * of range, and also when the format itself is not supported (use `compileFormat` to find out why).
 * Compiles the format on every call (a push compiles each conversion's format once, up front).
 */
export const parseWithFormat = (input: string, format: string): ParsedDate | undefined => {
  const c = compileFormat(format);
  return 'error' in c ? undefined : c.parse(input);
};
