/**
 * Admin sessions: a random id in an HttpOnly, SameSite=Strict cookie; the session itself (its CSRF
 * token, times and flash message) in the read store (collection `admin_sessions`), so every service
 * process sharing the store knows it. It ends after a period of inactivity and at the latest a fixed
 * time after sign-in. Only hashes of session ids are stored, so the store's contents are useless to
 * anyone who reads them.
 *
 * Signing out writes a revocation beside the session (read in the same round-trip as the session):
 * another process that loaded the session a moment earlier may still write it back (its activity
 * time or a flash message), but never the revocation away. The activity time is written at most
 * every `touchMs`, so a session may end up to that much before its exact inactivity limit.
 *
 * Whoever builds the admin interface creates the store and gives the same one to the admin API's
 * authentication, which accepts its sessions too.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CollectionSpec, Doc, ReadStore } from '../../projections/read-store.ts';

export interface Flash {
  readonly kind: 'success' | 'error';
  readonly text: string;
}

export interface Session {
  /** Sent in a hidden field of every form (and as `X-CSRF-Token` by scripts). */
  readonly csrf: string;
  readonly createdAt: number;
  lastSeen: number;
  /** A message for the next page shown (after a redirect); kept by `save`. */
  flash?: Flash;
}

export interface SessionOptions {
  /** Inactivity after which a session ends (default 1 hour). */
  readonly idleMs?: number;
  /** Longest a session lasts after sign-in, active or not (default 8 hours). */
  readonly maxAgeMs?: number;
  /** Most sessions kept at once; the least recently used one goes first (default 1000). */
  readonly maxSessions?: number;
  /** Activity is written back at most this often (default a tenth of idleMs, at most a minute). */
  readonly touchMs?: number;
  readonly clock?: () => number;
}

export const ADMIN_SESSIONS = 'admin_sessions';
const SPEC: CollectionSpec = { name: ADMIN_SESSIONS, indexes: ['kind', 'lastSeen', 'expiresAt'] };

interface SessionDoc extends Doc {
  readonly kind: 'session';
  readonly csrf: string;
  readonly createdAt: number;
  readonly lastSeen: number;
  /** When it ends if unused: for sweeping. */
  readonly expiresAt: number;
  readonly flash?: Flash;
}
interface RevokedDoc extends Doc {
  readonly kind: 'revoked';
  readonly expiresAt: number;
}

const hash = (s: string) => createHash('sha256').update(s).digest('base64url');
const revokedId = (key: string) => `revoked:${key}`;

/** Compares two secrets in constant time (of their digests, so lengths may differ). */
export const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());

/** 32 random bytes, base64url: 43 characters. */
export const newSecret = (): string => randomBytes(32).toString('base64url');

export class SessionStore {
  readonly idleMs: number;
  readonly maxAgeMs: number;
  private readonly maxSessions: number;
  private readonly touchMs: number;
  private readonly clock: () => number;
  private ready: Promise<void> | undefined;

  constructor(private readonly reads: ReadStore, options: SessionOptions = {}) {
    this.idleMs = options.idleMs ?? 60 * 60_000;
    this.maxAgeMs = options.maxAgeMs ?? 8 * 60 * 60_000;
    this.maxSessions = options.maxSessions ?? 1000;
    this.touchMs = options.touchMs ?? Math.min(60_000, Math.floor(this.idleMs / 10));
    this.clock = options.clock ?? Date.now;
  }

  private collection(): Promise<void> {
    return (this.ready ??= this.reads.ensureCollection(SPEC).catch((e: unknown) => {
      this.ready = undefined;
      throw e;
    }));
  }

  /** Starts a session; returns the id for the cookie (never stored) and the session. */
  async create(): Promise<{ id: string; session: Session }> {
    await this.collection();
    await this.sweep();
    const id = newSecret();
    const now = this.clock();
    const session: Session = { csrf: newSecret(), createdAt: now, lastSeen: now };
    await this.write(hash(id), session);
    return { id, session };
  }

  /** The live session for a cookie value, its inactivity timer restarted; undefined when unknown, ended or revoked. */
  async get(id: string | undefined): Promise<Session | undefined> {
    if (!id) return undefined;
    await this.collection();
    const key = hash(id);
    const found = await this.reads.getMany<SessionDoc | RevokedDoc>(ADMIN_SESSIONS, [key, revokedId(key)]);
    const doc = found.get(key);
    if (!doc || doc.kind !== 'session' || found.has(revokedId(key))) return undefined;
    const now = this.clock();
    const session: Session = { csrf: doc.csrf, createdAt: doc.createdAt, lastSeen: doc.lastSeen, ...(doc.flash ? { flash: doc.flash } : {}) };
    if (this.expired(session, now)) {
      await this.reads.delete(ADMIN_SESSIONS, key);
      return undefined;
    }
    if (now - session.lastSeen >= this.touchMs) {
      session.lastSeen = now;
      await this.write(key, session);
    }
    return session;
  }

  /** Stores what a request changed in a session it got from `get` (its flash message). */
  async save(id: string, session: Session): Promise<void> {
    await this.write(hash(id), session);
  }

  /** Ends a session in every process (see the header: a revocation no late write can undo). */
  async destroy(id: string | undefined): Promise<void> {
    if (!id) return;
    await this.collection();
    await this.revoke(hash(id));
  }

  /** Seconds the cookie should live: the session's remaining maximum age. */
  cookieMaxAge(session: Session): number {
    return Math.max(0, Math.ceil((session.createdAt + this.maxAgeMs - this.clock()) / 1000));
  }

  /** Live and ended-but-unswept sessions in the store. */
  async size(): Promise<number> {
    await this.collection();
    return this.reads.count(ADMIN_SESSIONS, { where: { kind: 'session' } });
  }

  private write(key: string, session: Session): Promise<void> {
    const expiresAt = Math.min(session.lastSeen + this.idleMs, session.createdAt + this.maxAgeMs);
    const doc: SessionDoc = { id: key, kind: 'session', csrf: session.csrf, createdAt: session.createdAt, lastSeen: session.lastSeen, expiresAt, ...(session.flash ? { flash: session.flash } : {}) };
    return this.reads.upsert(ADMIN_SESSIONS, doc);
  }

  private async revoke(key: string): Promise<void> {
    const revoked: RevokedDoc = { id: revokedId(key), kind: 'revoked', expiresAt: this.clock() + this.maxAgeMs };
    await this.reads.bulkWrite([
      { kind: 'put', collection: ADMIN_SESSIONS, doc: revoked },
      { kind: 'delete', collection: ADMIN_SESSIONS, id: key },
    ]);
  }

  private expired(session: Session, now: number): boolean {
    return now - session.lastSeen >= this.idleMs || now - session.createdAt >= this.maxAgeMs;
  }

  /** Removes ended sessions and old revocations; past `maxSessions`, the least recently used sessions. */
  private async sweep(): Promise<void> {
    const now = this.clock();
    const ended = await this.reads.find(ADMIN_SESSIONS, { where: { expiresAt: { $lte: now } }, limit: 1000 });
    if (ended.length) await this.reads.bulkWrite(ended.map((d) => ({ kind: 'delete' as const, collection: ADMIN_SESSIONS, id: d.id })));
    const excess = (await this.size()) - this.maxSessions + 1;
    if (excess <= 0) return;
    const oldest = await this.reads.find(ADMIN_SESSIONS, { where: { kind: 'session' }, sort: [['lastSeen', 'asc']], limit: excess });
    for (const d of oldest) await this.revoke(d.id);
  }
}

// ------------------------------------------------------------------------------------------
// Cookies

export interface CookieNames {
  readonly session: string;
  /** Double-submit token of the sign-in form (there is no session yet to hold one). */
  readonly signIn: string;
  readonly secure: boolean;
}

/** `__Host-` names when the service is served over https (the browser then insists on Secure, Path=/, no Domain). */
export const cookieNames = (baseUrl: string): CookieNames => {
  const secure = /^https:/i.test(baseUrl);
  const prefix = secure ? '__Host-' : '';
  return { session: `${prefix}svc_admin_session`, signIn: `${prefix}svc_admin_signin`, secure };
};

export const readCookie = (header: string | undefined, name: string): string | undefined => {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
};

/** A Set-Cookie value: HttpOnly, SameSite=Strict, Path=/ always; Secure when asked. Max-Age 0 deletes. */
export const serialiseCookie = (name: string, value: string, options: { maxAge: number; secure: boolean }): string =>
  [`${name}=${value}`, 'Path=/', `Max-Age=${options.maxAge}`, 'HttpOnly', 'SameSite=Strict', ...(options.secure ? ['Secure'] : [])].join('; ');
