import type { SandboxContext } from "../context.js";
import { bodyLength, bodyText, mediaType } from "../http/body.js";
import { jsonResponse } from "../http/envelopes.js";
import { type ApiResponse, headerValue, type SandboxRequest } from "../http/types.js";

// POST /oauth2/v2.0/token: the client credentials grant (specification 4.2, RFC 6749 sections 2.3.1,
// 4.4 and 5). Errors use the OAuth shape `{ error, error_description }`, not the service envelope.

const TOKEN_HEADERS = { "cache-control": "no-store", pragma: "no-cache" } as const;
const REALM = 'Basic realm="purchase-auth-sandbox"';

type ClientCredentials = { clientId: string; clientSecret: string };

export function handleTokenRequest(ctx: SandboxContext, request: SandboxRequest): ApiResponse {
  const basicHeader = basicCredentials(headerValue(request, "authorization"));
  const authMethod = basicHeader !== undefined ? "basic" : "body";
  let presentedClientId: string | undefined;

  const respond = (response: ApiResponse, outcome: string): ApiResponse => {
    ctx.stats.tokenRequests++;
    ctx.tokenRequestLog.push({
      at: ctx.clock.nowIso(),
      clientId: presentedClientId,
      authMethod: presentedClientId === undefined ? "none" : authMethod,
      outcome,
      status: response.status,
    });
    return response;
  };
  const fail = (status: number, error: string, description: string, headers?: Record<string, string>) =>
    respond(oauthError(status, error, description, headers), error);

  if (mediaType(headerValue(request, "content-type")) !== "application/x-www-form-urlencoded") {
    return fail(400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded");
  }
  if (request.bodyTooLarge || bodyLength(request) > ctx.options.maxBodyBytes)
    return fail(413, "invalid_request", "the request body is too large");
  const form = parseForm(bodyText(request));
  if (form === undefined) {
    return fail(400, "invalid_request", "the body must be form-encoded and name each parameter once");
  }

  // Client authentication: HTTP Basic or body parameters, never both (RFC 6749 2.3.1).
  if (basicHeader === "malformed") {
    return fail(401, "invalid_client", "the Basic credentials cannot be decoded", {
      "www-authenticate": REALM,
    });
  }
  const bodyClientId = form.get("client_id");
  const bodyClientSecret = form.get("client_secret");
  let credentials: ClientCredentials | undefined;
  if (basicHeader !== undefined) {
    presentedClientId = basicHeader.clientId;
    if (
      bodyClientSecret !== undefined ||
      (bodyClientId !== undefined && bodyClientId !== basicHeader.clientId)
    ) {
      return fail(400, "invalid_request", "use one client authentication method, not both");
    }
    credentials = basicHeader;
  } else if (bodyClientId !== undefined) {
    presentedClientId = bodyClientId;
    credentials = { clientId: bodyClientId, clientSecret: bodyClientSecret ?? "" };
  }

  const grantType = form.get("grant_type");
  if (grantType === undefined) return fail(400, "invalid_request", "grant_type is required");
  if (form.get("scope") === undefined) return fail(400, "invalid_request", "scope is required");

  const client =
    credentials === undefined
      ? undefined
      : ctx.merchants.authenticate(credentials.clientId, credentials.clientSecret);
  if (client === undefined) {
    const description =
      credentials === undefined ? "client authentication is required" : "unknown client or wrong secret";
    return fail(
      401,
      "invalid_client",
      description,
      basicHeader === undefined ? undefined : { "www-authenticate": REALM },
    );
  }
  if (grantType !== "client_credentials") {
    return fail(400, "unsupported_grant_type", "only client_credentials is supported");
  }
  if (form.get("scope") !== client.scope) {
    return fail(400, "invalid_scope", "the scope is not the one registered for this client");
  }

  const lifetimeSeconds = ctx.options.tokenLifetimeSeconds;
  const token = ctx.accessTokens.issue(client, ctx.clock.now(), lifetimeSeconds * 1000);
  ctx.stats.tokensIssued++;
  return respond(
    jsonResponse(
      200,
      {
        token_type: "Bearer",
        expires_in: lifetimeSeconds,
        ext_expires_in: lifetimeSeconds,
        access_token: token.accessToken,
      },
      TOKEN_HEADERS,
    ),
    "issued",
  );
}

/** 503 of the token endpoint (faults), in the OAuth error shape. */
export function tokenEndpointUnavailable(): ApiResponse {
  return oauthError(503, "temporarily_unavailable", "the token endpoint is temporarily unavailable");
}

/** 429 of the token endpoint (rate_limited fault), in the OAuth error shape, with `Retry-After`. */
export function tokenEndpointRateLimited(retryAfterSeconds: number): ApiResponse {
  return oauthError(429, "temporarily_unavailable", "too many requests; retry later", {
    "retry-after": String(retryAfterSeconds),
  });
}

function oauthError(
  status: number,
  error: string,
  description: string,
  headers?: Record<string, string>,
): ApiResponse {
  return jsonResponse(status, { error, error_description: description }, { ...TOKEN_HEADERS, ...headers });
}

/** Form parameters, or undefined when the body is not UTF-8 or repeats a parameter (RFC 6749 3.2). */
function parseForm(text: string | undefined): Map<string, string> | undefined {
  if (text === undefined) return undefined;
  const form = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (form.has(name)) return undefined;
    form.set(name, value);
  }
  return form;
}

/**
 * Credentials of an `Authorization: Basic` header. Id and secret are form-encoded before base64
 * (RFC 6749 2.3.1), so they are form-decoded here. undefined = no Basic header.
 */
function basicCredentials(header: string | undefined): ClientCredentials | "malformed" | undefined {
  const match = header === undefined ? null : /^basic\s+(\S+)\s*$/i.exec(header);
  if (match === null) return header !== undefined && /^basic\b/i.test(header) ? "malformed" : undefined;
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return "malformed";
  try {
    return {
      clientId: formDecode(decoded.slice(0, colon)),
      clientSecret: formDecode(decoded.slice(colon + 1)),
    };
  } catch {
    return "malformed";
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, " "));
}
