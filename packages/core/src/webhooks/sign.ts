import { randomUUID } from "node:crypto";
import { DEFAULT_HEADERS, type ServiceHeaders } from "../config/wire-names.js";
import { computeSignature } from "./signature.js";

export interface SignWebhookOptions {
  /** Unix seconds. Default: now. */
  timestamp?: number;
  /** Header name overrides. */
  headers?: Partial<ServiceHeaders>;
}

export interface SignedWebhook {
  /** The exact body to send; the signature covers these bytes. */
  body: string;
  headers: Record<string, string>;
}

/**
 * Signs a webhook the way the service does, for your tests: `{ id, type, createdAt, data }` is
 * serialised (an `id` and `createdAt` are filled in when missing) and signed with every secret.
 */
export function signWebhook(
  event: { type: string; data: unknown; id?: string; createdAt?: string },
  secrets: string | ReadonlyArray<string>,
  options: SignWebhookOptions = {},
): SignedWebhook {
  const names = { ...DEFAULT_HEADERS, ...options.headers };
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const payload = {
    id: event.id ?? randomUUID(),
    type: event.type,
    createdAt: event.createdAt ?? new Date().toISOString(),
    data: event.data,
  };
  const body = JSON.stringify(payload);
  const signatures = (typeof secrets === "string" ? [secrets] : secrets).map(
    (secret) => `v1=${computeSignature(body, timestamp, secret)}`,
  );
  return {
    body,
    headers: {
      "content-type": "application/json",
      [names.webhookId.toLowerCase()]: payload.id,
      [names.webhookTimestamp.toLowerCase()]: String(timestamp),
      [names.webhookSignature.toLowerCase()]: signatures.join(","),
    },
  };
}
