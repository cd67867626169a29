/**
 * `SVC_TRUST_PROXY`: whether the client address of a request is taken from `X-Forwarded-For`
 * (for the auth-failure throttle and the request log). Off unless set: the header is anyone's to
 * write, so it is only believed when the service is reached through proxies that append to it.
 *
 * - unset, empty or `0`: off; the client is the peer of the TCP connection.
 * - a hop count `1`..`32`: that many proxies stand in front of every connection; the client is the
 *   entry that many places from the right of `X-Forwarded-For` (the left-most if it has fewer).
 * - a comma-separated list of proxy addresses and CIDR ranges (`10.0.0.0/8, 192.168.1.7, fd00::/8`):
 *   the header is believed only on connections from such an address, and the client is the
 *   right-most entry that is not one of them.
 */
import { isIP } from 'node:net';

export type TrustProxy =
  | { readonly kind: 'off' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'addresses'; readonly addresses: readonly string[] };

export const TRUST_PROXY_EXPECTED = 'a proxy hop count from 0 to 32, or a comma-separated list of proxy IP addresses and CIDR ranges';

const validEntry = (entry: string): boolean => {
  const slash = entry.indexOf('/');
  if (slash < 0) return isIP(entry) !== 0;
  const family = isIP(entry.slice(0, slash));
  const bits = entry.slice(slash + 1);
  return family !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
};

/** The setting's meaning; undefined when it is neither a hop count nor a list of addresses. */
export const parseTrustProxy = (value: string | undefined): TrustProxy | undefined => {
  const s = value?.trim() ?? '';
  if (s === '' || s === '0') return { kind: 'off' };
  if (/^\d+$/.test(s)) {
    const hops = Number(s);
    return hops <= 32 ? { kind: 'hops', hops } : undefined;
  }
  const addresses = s.split(',').map((e) => e.trim());
  return addresses.every(validEntry) ? { kind: 'addresses', addresses } : undefined;
};
