import { createHash, randomBytes } from 'node:crypto';

/**
 * Refs are 12 characters of lower-case Crockford base32 (no i, l, o, u): 60 random bits, short,
 * URL-safe and unique without a central counter. Creating an object appends with `no_stream`, so
 * even a collision could never overwrite another object.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const REF_PATTERN = /^[0-9a-hjkmnp-tv-z]{12}$/;

const encode = (bytes: Buffer): string => {
  let bits = 0n;
  for (const b of bytes.subarray(0, 8)) bits = (bits << 8n) | BigInt(b);
  let out = '';
  for (let i = 0; i < 12; i++) {
    out += ALPHABET[Number((bits >> BigInt(59 - i * 5)) & 31n)];
  }
  return out;
};

export const newRef = (): string => encode(randomBytes(8));

/** A stable ref for a schema item, derived from its API code. */
export const refForCode = (code: string): string => encode(createHash('sha256').update(`schema:${code}`).digest());

export const isRef = (s: unknown): s is string => typeof s === 'string' && REF_PATTERN.test(s);
