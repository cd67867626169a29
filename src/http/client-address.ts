/**
 * The client address of a request (`ctx.ip`, which the auth-failure throttle and the request log
 * use), by the `SVC_TRUST_PROXY` setting (src/config/trust-proxy.ts). Koa's own `app.proxy` stays
 * off: it can trust a hop count but not a list of proxy addresses.
 */
import { BlockList, isIP } from 'node:net';
import type { Middleware } from 'koa';
import type { TrustProxy } from '../config/trust-proxy.ts';

/** A bare address: IPv4-mapped IPv6 as IPv4, brackets and ports dropped; undefined when it is none. */
const bare = (entry: string): string | undefined => {
  let s = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.indexOf(':'));
  if (/^::ffff:[\d.]+$/i.test(s)) s = s.slice(7);
  return isIP(s) ? s : undefined;
};

const blockList = (addresses: readonly string[]): BlockList => {
  const list = new BlockList();
  for (const entry of addresses) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
};

/** `(peer address, X-Forwarded-For value) -> client address` for a setting. */
export const clientAddressOf = (trust: TrustProxy): ((peer: string, forwardedFor: string | undefined) => string) => {
  if (trust.kind === 'off') return (peer) => bare(peer) ?? peer;
  if (trust.kind === 'hops') {
    return (peer, forwardedFor) => {
      const entries = (forwardedFor ?? '').split(',').filter((e) => e.trim() !== '');
      if (entries.length === 0) return bare(peer) ?? peer;
      // The right-most `hops` entries were written by our proxies; anything left of them by anyone.
      return bare(entries[Math.max(0, entries.length - trust.hops)]!) ?? bare(peer) ?? peer;
    };
  }
  const trusted = blockList(trust.addresses);
  const isTrusted = (address: string) => trusted.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return (peer, forwardedFor) => {
    let client = bare(peer) ?? peer;
    if (!isIP(client) || !isTrusted(client)) return client;
    const entries = (forwardedFor ?? '').split(',');
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = bare(entries[i]!);
      // What a trusted proxy wrote is not an address: keep the last address known to be true.
      if (entry === undefined) break;
      client = entry;
      if (!isTrusted(entry)) break;
    }
    return client;
  };
};

/** Sets `ctx.ip` from the connection and, when trusted, X-Forwarded-For; first in the chain. */
export const clientAddress = (trust: TrustProxy): Middleware => {
  const of = clientAddressOf(trust);
  return (ctx, next) => {
    ctx.request.ip = of(ctx.req.socket.remoteAddress ?? '', ctx.get('X-Forwarded-For') || undefined);
    return next();
  };
};
