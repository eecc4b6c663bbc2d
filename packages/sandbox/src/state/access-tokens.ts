import { randomOpaque } from "../core/ids.js";
import type { ApiClient } from "./merchants.js";

/** An issued bearer token. Opaque to clients: they must not read anything into it. */
export interface AccessToken {
  readonly accessToken: string;
  readonly clientId: string;
  readonly merchantId: string;
  /** Virtual epoch ms from which the token is rejected. */
  readonly expiresAt: number;
}

/**
 * Issued access tokens. Tokens are kept in issue order, and all live equally long, so expired ones
 * sit at the front and are dropped there as new ones are issued (no scans of history).
 */
export class AccessTokenStore {
  readonly #tokens = new Map<string, AccessToken>();
  readonly #maxTokens: number;

  constructor(maxTokens: number) {
    this.#maxTokens = maxTokens;
  }

  issue(client: ApiClient, now: number, lifetimeMs: number): AccessToken {
    this.#dropExpired(now);
    const token: AccessToken = {
      accessToken: randomOpaque(32),
      clientId: client.clientId,
      merchantId: client.merchantId,
      expiresAt: now + lifetimeMs,
    };
    this.#tokens.set(token.accessToken, token);
    if (this.#tokens.size > this.#maxTokens) {
      const oldest = this.#tokens.keys().next();
      if (!oldest.done) this.#tokens.delete(oldest.value);
    }
    return token;
  }

  /** The token when it exists and has not expired at `now`. */
  find(accessToken: string, now: number): AccessToken | undefined {
    const token = this.#tokens.get(accessToken);
    return token !== undefined && now < token.expiresAt ? token : undefined;
  }

  revoke(accessToken: string): boolean {
    return this.#tokens.delete(accessToken);
  }

  /** Revokes every token, or every token of one client. Returns how many were revoked. */
  revokeAll(clientId?: string): number {
    let revoked = 0;
    for (const token of this.#tokens.values()) {
      if (clientId === undefined || token.clientId === clientId) {
        this.#tokens.delete(token.accessToken);
        revoked++;
      }
    }
    return revoked;
  }

  clear(): void {
    this.#tokens.clear();
  }

  #dropExpired(now: number): void {
    for (const token of this.#tokens.values()) {
      if (now < token.expiresAt) return;
      this.#tokens.delete(token.accessToken);
    }
  }
}
