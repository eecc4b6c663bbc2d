import { randomBytes } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";

// Server-side sessions behind an opaque cookie. The cookie holds a random id and nothing else; who
// is signed in, the cart and the merchant flag stay on the server, where the browser cannot edit them.

export interface Flash {
  tone: "success" | "info" | "error";
  text: string;
}

export interface Session {
  id: string;
  /** Sent back with every form and every fetch that changes something (see csrf.ts). */
  csrfToken: string;
  /** The signed-in demo customer. */
  customerId?: string;
  /** Signed in on the demo merchant page (see routes/merchant.ts). */
  merchant: boolean;
  cartId?: string;
  /** A one-time message for the next page. */
  flash?: Flash;
  lastSeen: number;
}

export const SESSION_COOKIE = "hb_session";
const IDLE_LIMIT_MS = 8 * 60 * 60_000;
// An in-memory demo store: bounded, so a crawler cannot grow it without limit. A real shop keeps
// sessions in its database or Redis.
const MAX_SESSIONS = 10_000;

const randomToken = () => randomBytes(32).toString("base64url");

export class SessionStore {
  readonly #sessions = new Map<string, Session>();

  create(): Session {
    const session: Session = {
      id: randomToken(),
      csrfToken: randomToken(),
      merchant: false,
      lastSeen: Date.now(),
    };
    this.#store(session);
    return session;
  }

  find(id: string): Session | undefined {
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    if (Date.now() - session.lastSeen > IDLE_LIMIT_MS) {
      this.#sessions.delete(id);
      return undefined;
    }
    session.lastSeen = Date.now();
    this.#store(session); // re-inserted: the map's order is least recently used first
    return session;
  }

  /**
   * The same session under a new id and CSRF token. Called whenever privileges change (sign-in,
   * sign-out), so an id someone learnt or planted before is worthless afterwards.
   */
  renew(session: Session): Session {
    this.#sessions.delete(session.id);
    const renewed: Session = {
      ...session,
      id: randomToken(),
      csrfToken: randomToken(),
      lastSeen: Date.now(),
    };
    this.#store(renewed);
    return renewed;
  }

  #store(session: Session): void {
    this.#sessions.delete(session.id);
    this.#sessions.set(session.id, session);
    while (this.#sessions.size > MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
  }
}

const SESSIONS = new WeakMap<Request, Session>();

/** Finds the request's session by its cookie, or starts one. */
export function sessions(store: SessionStore): RequestHandler {
  return (req, res, next) => {
    const id = readCookie(req.headers.cookie, SESSION_COOKIE);
    let session = id === undefined ? undefined : store.find(id);
    if (!session) {
      session = store.create();
      setSessionCookie(req, res, session);
    }
    SESSIONS.set(req, session);
    next();
  };
}

/** The request's session (the `sessions` middleware must have run). */
export function sessionOf(req: Request): Session {
  const session = SESSIONS.get(req);
  if (!session) throw new Error("sessionOf: the sessions middleware did not run for this route");
  return session;
}

/** Renews the request's session (see `SessionStore.renew`) and sends its new cookie. */
export function renewSession(req: Request, res: Response, store: SessionStore): Session {
  const renewed = store.renew(sessionOf(req));
  SESSIONS.set(req, renewed);
  setSessionCookie(req, res, renewed);
  return renewed;
}

function setSessionCookie(req: Request, res: Response, session: Session): void {
  res.cookie(SESSION_COOKIE, session.id, {
    httpOnly: true, // scripts cannot read it
    sameSite: "lax", // not sent with cross-site POSTs
    secure: req.secure, // HTTPS only, once the shop runs behind HTTPS
    path: "/",
  });
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const separator = part.indexOf("=");
    if (separator < 0) continue;
    if (part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}
