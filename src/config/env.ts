import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';

/** A codec from an environment variable's text (or its absence) to a typed value. */
type EnvCodec<A> = t.Type<A, unknown, unknown>;

const fromString = <A>(name: string, expected: string, parse: (s: string) => A | undefined, fallback?: () => A): EnvCodec<A> =>
  new t.Type<A, unknown, unknown>(
    name,
    (u): u is A => u !== undefined,
    (u, c) => {
      if (u === undefined || u === '') return fallback ? t.success(fallback()) : t.failure(u, c, `is required (${expected})`);
      const v = typeof u === 'string' ? parse(u.trim()) : undefined;
      return v === undefined ? t.failure(u, c, `must be ${expected}`) : t.success(v);
    },
    (a) => a,
  );

export const integer = (min: number, max: number, fallback?: number): EnvCodec<number> =>
  fromString(`Integer[${min},${max}]`, `an integer from ${min} to ${max}`, (s) => {
    if (!/^\d+$/.test(s)) return undefined;
    const n = Number(s);
    return n >= min && n <= max ? n : undefined;
  }, fallback === undefined ? undefined : () => fallback);

const SIZE = /^(\d+)\s*(b|kb|mb|gb)?$/i;
const UNITS = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 } as const;
export const byteSize = (fallback: number): EnvCodec<number> =>
  fromString('ByteSize', 'a size in bytes, e.g. 1048576, 512kb or 2mb', (s) => {
    const m = SIZE.exec(s);
    if (!m) return undefined;
    const n = Number(m[1]) * UNITS[(m[2]?.toLowerCase() ?? 'b') as keyof typeof UNITS];
    return n > 0 && Number.isSafeInteger(n) ? n : undefined;
  }, () => fallback);

export const httpUrl = (fallback?: () => string): EnvCodec<string> =>
  fromString('HttpUrl', 'an absolute http(s) URL without query or fragment, e.g. https://svc.example.org', (s) => {
    try {
      const u = new URL(s);
      if (!['http:', 'https:'].includes(u.protocol) || u.search || u.hash || u.username) return undefined;
      return u.toString().replace(/\/+$/, '');
    } catch {
      return undefined;
    }
  }, fallback);

export const text = (expected: string, test: (s: string) => boolean, fallback?: () => string): EnvCodec<string> =>
  fromString('Text', expected, (s) => (test(s) ? s : undefined), fallback);

export const optional = <A>(codec: EnvCodec<A>): EnvCodec<A | undefined> =>
  new t.Type<A | undefined, unknown, unknown>(
    `Optional<${codec.name}>`,
    (u): u is A | undefined => true,
    (u, c) => (u === undefined || u === '' ? t.success(undefined) : codec.validate(u, c)),
    (a) => a,
  );

export const oneOf = <L extends string>(values: readonly L[], fallback: L): EnvCodec<L> =>
  fromString('OneOf', `one of ${values.join(', ')}`, (s) => values.find((v) => v === s), () => fallback);

/**
 * Decodes every variable of `spec` and reports every bad one, one line each. Values are never
 * echoed: some of these variables hold secrets.
 */
export const decodeEnv = <S extends Record<string, t.Any>>(
  spec: S,
  env: Record<string, string | undefined>,
): { ok: true; value: { [K in keyof S]: t.TypeOf<S[K]> } } | { ok: false; errors: string[] } => {
  const value: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const [name, codec] of Object.entries(spec)) {
    const result = codec.decode(env[name]);
    if (isLeft(result)) errors.push(`${name} ${result.left[0]?.message ?? 'is invalid'}`);
    else value[name] = result.right;
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: value as { [K in keyof S]: t.TypeOf<S[K]> } };
};
