import type { Dispatcher } from "undici";
import type { Logger } from "../config/options.js";
import { AuthenticationError } from "../errors/errors.js";
import { secretFreeCause } from "../http/secret-free-cause.js";
import { sendOnce } from "../http/transport.js";
import { oauthErrorSchema, tokenResponseSchema } from "../schemas/oauth.js";

/** A bearer token and when it stops being valid (epoch ms, our clock). */
export interface AccessToken {
  readonly value: string;
  readonly expiresAt: number;
  /** When to start refreshing it in the background (epoch ms, our clock). */
  readonly refreshAt: number;
}

/** After a failed background refresh, the first pause before the next; it doubles up to the cap. */
const BACKGROUND_RETRY_BASE_MS = 2_000;
const BACKGROUND_RETRY_MAX_MS = 30_000;

export interface TokenProviderOptions {
  tokenUrl: URL;
  clientId: string;
  clientSecret: string;
  scope: string;
  dispatcher: Dispatcher;
  timeoutMs: number;
  refreshMarginMs: number;
  now: () => number;
  logger: Logger;
}

/**
 * OAuth 2.0 client-credentials tokens, cached. Like Azure's token cycler: inside the refresh margin
 * the current token keeps serving while one background refresh runs; only an expired (or
 * discarded) token makes callers wait. Every caller shares the single request in flight, so 1,000
 * concurrent first calls make one token request.
 */
export class TokenProvider {
  readonly #options: TokenProviderOptions;
  #current: AccessToken | undefined;
  #inFlight: Promise<AccessToken> | undefined;
  /** No background refresh before this (epoch ms, our clock); set by a failed one. */
  #backgroundPausedUntil = 0;
  #failedBackgroundTries = 0;

  constructor(options: TokenProviderOptions) {
    this.#options = options;
  }

  /** A token valid now. Waits only when there is none or it has expired. */
  async getToken(): Promise<AccessToken> {
    return this.usableNow() ?? this.#refresh();
  }

  /**
   * The cached token when it is valid now, without waiting (inside the refresh margin it also
   * starts the one background refresh); undefined when the caller has to wait for `getToken`.
   */
  usableNow(): AccessToken | undefined {
    const current = this.#current;
    if (current === undefined) return undefined;
    const now = this.#options.now();
    if (now < current.refreshAt) return current;
    if (now < current.expiresAt) {
      this.#refreshInBackground(current, now);
      return current;
    }
    return undefined;
  }

  /**
   * Starts the one background refresh, unless one is running or a failed one asked for a pause:
   * while the token endpoint fails, retrying on every call would turn each service call into a
   * token request and a warning.
   */
  #refreshInBackground(current: AccessToken, now: number): void {
    if (this.#inFlight !== undefined || now < this.#backgroundPausedUntil) return;
    this.#refresh().catch((error: unknown) => {
      // The current token still works: try again after a pause that grows with each failure, never
      // past its expiry (from then on callers wait for a token in the foreground).
      this.#failedBackgroundTries += 1;
      const pauseMs = Math.min(
        BACKGROUND_RETRY_BASE_MS * 2 ** (this.#failedBackgroundTries - 1),
        BACKGROUND_RETRY_MAX_MS,
      );
      this.#backgroundPausedUntil = Math.min(this.#options.now() + pauseMs, current.expiresAt);
      this.#options.logger.warn?.("purchase-auth: background token refresh failed", {
        error: describe(error),
        retryInMs: Math.max(0, this.#backgroundPausedUntil - this.#options.now()),
      });
    });
  }

  /**
   * Called after a 401. Forgets the token only if it is still the one that failed, so a burst of
   * 401s for one old token causes one refresh, not one per caller.
   */
  invalidate(failed: AccessToken): void {
    if (this.#current === failed) this.#current = undefined;
  }

  #refresh(): Promise<AccessToken> {
    this.#inFlight ??= this.#requestToken().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #requestToken(): Promise<AccessToken> {
    const { tokenUrl, clientId, clientSecret, scope, dispatcher, timeoutMs, now, logger } = this.#options;
    const requestedAt = now();
    const body = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: clientId,
      client_secret: clientSecret,
      scope,
    }).toString();
    let response: Awaited<ReturnType<typeof sendOnce>>;
    try {
      response = await sendOnce(dispatcher, {
        method: "POST",
        origin: tokenUrl.origin,
        path: tokenUrl.pathname + tokenUrl.search,
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body,
        timeoutMs,
      });
    } catch (error) {
      throw new TokenEndpointUnreachableError(secretFreeCause(error, [clientSecret]));
    }
    const json = parseJson(response.body);
    if (response.status !== 200) {
      const oauth = oauthErrorSchema.safeParse(json);
      const code = oauth.success ? oauth.data.error : undefined;
      const description =
        oauth.success && oauth.data.error_description ? `: ${oauth.data.error_description}` : "";
      const error = new AuthenticationError(
        `Token request failed with ${response.status}${code ? ` ${code}` : ""}${description}`,
        // Nothing reached the service: the call was not sent.
        { status: response.status, outcome: "not_sent", ...(code === undefined ? {} : { oauthError: code }) },
      );
      // A failure on its side or a busy endpoint (5xx, 408, 429) is transient, retried like any
      // unreachable endpoint: only its other answers say the credentials or settings are wrong.
      if (isTransientStatus(response.status)) throw new TokenEndpointUnreachableError(error);
      throw error;
    }
    const parsed = tokenResponseSchema.safeParse(json);
    if (!parsed.success) {
      throw new TokenEndpointUnreachableError(
        new AuthenticationError("Token endpoint answered 200 without a usable Bearer token", {
          status: 200,
          outcome: "not_sent",
        }),
      );
    }
    // Expiry counts from when we asked, not when the answer arrived: never later than the server's.
    const lifetimeMs = parsed.data.expires_in * 1000;
    // Refresh the margin before expiry; a token that lives no longer than the margin is refreshed at
    // half its lifetime instead (refreshing at once would fetch a token on every call).
    const refreshAfterMs =
      lifetimeMs > this.#options.refreshMarginMs
        ? lifetimeMs - this.#options.refreshMarginMs
        : lifetimeMs / 2;
    const token = {
      value: parsed.data.access_token,
      expiresAt: requestedAt + lifetimeMs,
      refreshAt: requestedAt + refreshAfterMs,
    };
    this.#current = token;
    this.#backgroundPausedUntil = 0;
    this.#failedBackgroundTries = 0;
    logger.debug?.("purchase-auth: obtained access token", { expiresInSeconds: parsed.data.expires_in });
    return token;
  }
}

/**
 * The token endpoint could not be reached, failed on its side (5xx) or was busy (408, 429): a
 * transient condition the caller may retry. No request reached the service.
 */
export class TokenEndpointUnreachableError extends Error {
  constructor(cause: unknown) {
    super("The token endpoint is unreachable or failing", { cause });
    this.name = "TokenEndpointUnreachableError";
  }
}

function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
