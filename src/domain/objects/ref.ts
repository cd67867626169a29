/**
 * Refs are 12 characters of lower-case Crockford base32 (no i, l, o, u): 60 bits, short, URL-safe
 * and unique without a central counter. Creating an object appends with `no_stream`, so even a
 * collision could never overwrite another object.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const REF_PATTERN = /^[0-9a-hjkmnp-tv-z]{12}$/;

/** The ref spelt by the first 60 bits of `bytes` (at least 8 bytes). */
export const encodeRef = (bytes: Uint8Array): string => {
  let bits = 0n;
  for (const b of bytes.subarray(0, 8)) bits = (bits << 8n) | BigInt(b);
  let out = '';
  for (let i = 0; i < 12; i++) {
    out += ALPHABET[Number((bits >> BigInt(59 - i * 5)) & 31n)];
  }
  return out;
};

export const isRef = (s: unknown): s is string => typeof s === 'string' && REF_PATTERN.test(s);
