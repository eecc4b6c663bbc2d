import {
  DEFAULT_EVENT_TYPES,
  DEFAULT_HEADERS,
  type ServiceEventTypes,
  type ServiceHeaders,
} from "../config/wire-names.js";
import { WebhookVerificationError } from "../errors/errors.js";
import { type WebhookEvent, webhookEventSchema } from "../schemas/webhook-events.js";
import { computeSignature, parseSignatureHeader, signaturesMatch } from "./signature.js";

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Oldest (and furthest in the future) timestamp accepted, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time in Unix seconds. Default: the system clock. */
  nowSeconds?: number;
  /** Header name overrides, as in the client options. */
  headers?: Partial<ServiceHeaders>;
  /** Event type overrides, as in the client options. */
  eventTypes?: Partial<ServiceEventTypes>;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name.toLowerCase()] ?? record[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/**
 * Verifies a webhook on its RAW body (the bytes as received, before any JSON parsing) and returns
 * the typed event. Checks, in order: headers present, timestamp within tolerance, a `v1=` signature
 * made with one of `secrets` (several during rotation; constant-time compare), body id = header id,
 * and the event's shape. Throws `WebhookVerificationError` naming the failure.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secrets: string | ReadonlyArray<string>,
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const names = { ...DEFAULT_HEADERS, ...options.headers };
  const secretList = typeof secrets === "string" ? [secrets] : [...secrets];
  if (secretList.length === 0 || secretList.some((secret) => typeof secret !== "string" || secret === "")) {
    throw new TypeError("verifyWebhook needs at least one non-empty webhook secret");
  }
  const id = header(headers, names.webhookId);
  const timestamp = header(headers, names.webhookTimestamp);
  const signature = header(headers, names.webhookSignature);
  for (const [name, value] of [
    [names.webhookId, id],
    [names.webhookTimestamp, timestamp],
    [names.webhookSignature, signature],
  ] as const) {
    if (!value) throw new WebhookVerificationError("missing_header", `Webhook is missing the ${name} header`);
  }

  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  // A NaN tolerance made every timestamp "within" it: an event signed in 1970 was accepted.
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError(`toleranceSeconds must be a finite number of seconds >= 0, got ${String(tolerance)}`);
  }
  if (!Number.isFinite(now) || now < 0) {
    throw new TypeError(`nowSeconds must be a finite number of seconds >= 0, got ${String(now)}`);
  }
  const sentAt = /^\d{1,12}$/.test(timestamp!) ? Number(timestamp) : Number.NaN;
  if (!Number.isFinite(sentAt) || Math.abs(now - sentAt) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_outside_tolerance",
      `Webhook timestamp is not within ${tolerance} s of now (replayed or clock skew)`,
    );
  }

  const given = parseSignatureHeader(signature!);
  const valid = secretList.some((secret) => {
    const expected = computeSignature(rawBody, timestamp!, secret);
    return given.some((candidate) => signaturesMatch(expected, candidate));
  });
  if (!valid) {
    throw new WebhookVerificationError(
      "invalid_signature",
      "Webhook signature does not match any webhook secret",
    );
  }

  let json: unknown;
  try {
    json = JSON.parse(typeof rawBody === "string" ? rawBody : Buffer.from(rawBody).toString("utf8"));
  } catch {
    throw new WebhookVerificationError("invalid_payload", "Webhook body is not JSON");
  }
  const body = json as { id?: unknown; type?: unknown } | null;
  if (typeof body !== "object" || body === null || body.id !== id) {
    throw new WebhookVerificationError(
      "id_mismatch",
      `Webhook body id does not match the ${names.webhookId} header`,
    );
  }
  const canonicalType = toCanonicalType(body.type, options.eventTypes);
  if (canonicalType === undefined) {
    throw new WebhookVerificationError(
      "unsupported_event",
      `Webhook event type ${String(body.type)} is not supported`,
    );
  }
  const parsed = webhookEventSchema.safeParse({ ...body, type: canonicalType });
  if (!parsed.success) {
    throw new WebhookVerificationError(
      "invalid_payload",
      `Webhook ${canonicalType} event has an unexpected shape`,
    );
  }
  return parsed.data;
}

function toCanonicalType(
  type: unknown,
  overrides: Partial<ServiceEventTypes> | undefined,
): string | undefined {
  const names = { ...DEFAULT_EVENT_TYPES, ...overrides };
  for (const [canonical, wire] of Object.entries(names)) if (wire === type) return canonical;
  return undefined;
}
