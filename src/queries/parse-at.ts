import { DomainError } from '../domain/errors.ts';

// The ISO forms Haplo's XDate parses: YYYY, YYYY-MM, YYYY-MM-DD, then T or a space and HH:mm[:ss[.fff]],
// then Z or ±HH[:]MM. Haplo falls back to `new Date(str)` and fails with a server error on nonsense;
// here anything else (and out-of-range fields, which XDate would roll over) is a 400.
const AT = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|([+-])(\d{2}):?(\d{2}))?)?)?)?$/;

const bad = () =>
  new DomainError(
    'invalid',
    'svc:api:reporting:bad-at',
    'at must be an ISO 8601 date and time: YYYY, YYYY-MM, YYYY-MM-DD, or YYYY-MM-DD followed by T or a space and hh:mm[:ss[.fff]], ' +
      'optionally ending in Z or ±hh:mm; without a zone it is UTC (e.g. 2024-03-12T10:30:00, 2024-03-12 10:30, 2024-03-12T10:30:00.250+01:00)',
  );

/** `at` as Haplo accepts it (haplo-behaviour.md §4.4), as a UTC instant; a time without a zone is UTC. */
export const parseAt = (value: string | string[] | undefined): Date | undefined => {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0] ?? '' : value;
  const m = AT.exec(text);
  if (!m) throw bad();
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', frac, zone, sign, oh, om] = m;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  date.setUTCFullYear(fields[0], fields[1], fields[2]);
  date.setUTCHours(fields[3], fields[4], fields[5], frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0);
  const rolledOver =
    date.getUTCFullYear() !== fields[0] || date.getUTCMonth() !== fields[1] || date.getUTCDate() !== fields[2] || date.getUTCHours() !== fields[3] || date.getUTCMinutes() !== fields[4] || date.getUTCSeconds() !== fields[5];
  if (rolledOver) throw bad();
  if (zone && zone !== 'Z') {
    if (Number(oh) > 23 || Number(om) > 59) throw bad();
    const offsetMinutes = Number(oh) * 60 + Number(om);
    date.setTime(date.getTime() - (sign === '-' ? -1 : 1) * offsetMinutes * 60_000);
  }
  return date;
};
