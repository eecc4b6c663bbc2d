import { createHmac } from "node:crypto";

/** `v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`, one entry per secret, comma-separated (supplement C). */
export function signatureHeader(secrets: readonly string[], timestamp: string, rawBody: string): string {
  return secrets
    .map((secret) => `v1=${createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex")}`)
    .join(",");
}
