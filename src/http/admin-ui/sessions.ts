/**
 * Admin sessions: a random id in an HttpOnly, SameSite=Strict cookie, the session itself (with its
 * CSRF token) in memory on the server, expiring after a period of inactivity and at the latest a
 * fixed time after sign-in. Only hashes of session ids are kept, so the store's keys are useless
 * to anyone who reads them. Whoever builds the admin interface creates the store and gives the
 * same one to the admin API's authentication, which accepts its sessions too.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface Flash {
  readonly kind: 'success' | 'error';
  readonly text: string;
}

export interface Session {
  /** Sent in a hidden field of every form (and as `X-CSRF-Token` by scripts). */
  readonly csrf: string;
  readonly createdAt: number;
  lastSeen: number;
  /** A message for the next page shown (after a redirect). */
  flash?: Flash;
}

export interface SessionOptions {
  /** Inactivity after which a session ends (default 1 hour). */
  readonly idleMs?: number;
  /** Longest a session lasts after sign-in, active or not (default 8 hours). */
  readonly maxAgeMs?: number;
  /** Most sessions kept at once; the least recently used one goes first (default 1000). */
  readonly maxSessions?: number;
  readonly clock?: () => number;
}

const hash = (s: string) => createHash('sha256').update(s).digest('base64url');

/** Compares two secrets in constant time (of their digests, so lengths may differ). */
export const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());

/** 32 random bytes, base64url: 43 characters. */
export const newSecret = (): string => randomBytes(32).toString('base64url');

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  readonly idleMs: number;
  readonly maxAgeMs: number;
  private readonly maxSessions: number;
  private readonly clock: () => number;

  constructor(options: SessionOptions = {}) {
    this.idleMs = options.idleMs ?? 60 * 60_000;
    this.maxAgeMs = options.maxAgeMs ?? 8 * 60 * 60_000;
    this.maxSessions = options.maxSessions ?? 1000;
    this.clock = options.clock ?? Date.now;
  }

  /** Starts a session; returns the id for the cookie (never stored) and the session. */
  create(): { id: string; session: Session } {
    this.sweep();
    while (this.sessions.size >= this.maxSessions) {
      const oldest = this.sessions.keys().next();
      if (oldest.done) break;
      this.sessions.delete(oldest.value);
    }
    const id = newSecret();
    const now = this.clock();
    const session: Session = { csrf: newSecret(), createdAt: now, lastSeen: now };
    this.sessions.set(hash(id), session);
    return { id, session };
  }

  /** The live session for a cookie value, its inactivity timer restarted; undefined when unknown or expired. */
  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const key = hash(id);
    const session = this.sessions.get(key);
    if (!session) return undefined;
    const now = this.clock();
    if (this.expired(session, now)) {
      this.sessions.delete(key);
      return undefined;
    }
    session.lastSeen = now;
    // Re-insert so iteration order is least recently used first.
    this.sessions.delete(key);
    this.sessions.set(key, session);
    return session;
  }

  destroy(id: string | undefined): void {
    if (id) this.sessions.delete(hash(id));
  }

  /** Seconds the cookie should live: the session's remaining maximum age. */
  cookieMaxAge(session: Session): number {
    return Math.max(0, Math.ceil((session.createdAt + this.maxAgeMs - this.clock()) / 1000));
  }

  get size(): number {
    return this.sessions.size;
  }

  private expired(session: Session, now: number): boolean {
    return now - session.lastSeen >= this.idleMs || now - session.createdAt >= this.maxAgeMs;
  }

  private sweep(): void {
    const now = this.clock();
    for (const [key, session] of this.sessions) if (this.expired(session, now)) this.sessions.delete(key);
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
