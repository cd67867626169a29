import { DomainError } from '../domain/errors.ts';

const AT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?Z?$/;

/** `at` as the contract gives it (UTC, `YYYY-MM-DDThh:mm:ss`), optionally with milliseconds and `Z`. */
export const parseAt = (value: string | string[] | undefined): Date | undefined => {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0] ?? '' : value;
  const m = AT.exec(text);
  const bad = () =>
    new DomainError(
      'invalid',
      'svc:api:reporting:bad-at',
      'at must be a UTC date and time of the form YYYY-MM-DDThh:mm:ss, optionally with milliseconds and Z (e.g. 2024-03-12T10:30:00 or 2024-03-12T10:30:00.250Z)',
    );
  if (!m) throw bad();
  const [, y, mo, d, h, mi, s, ms] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms ? Math.round(Number(ms) * 1000) : 0));
  if (date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d) || date.getUTCHours() !== Number(h) || date.getUTCMinutes() !== Number(mi) || date.getUTCSeconds() !== Number(s)) {
    throw bad();
  }
  return date;
};
