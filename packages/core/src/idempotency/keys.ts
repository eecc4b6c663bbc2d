import { createHash, randomUUID } from "node:crypto";
import { isGuid } from "../schemas/common.js";

/** A fresh random (version 4) idempotency key. */
export function newIdempotencyKey(): string {
  return randomUUID();
}

/**
 * Namespace of the keys `idempotencyKeyFor` derives. Pass your own (any GUID) to keep two
 * applications that share order references from ever deriving the same key.
 */
export const DEFAULT_IDEMPOTENCY_NAMESPACE = "5d0c1a3e-8f1b-4f6e-9a43-3c2b7a9e6d10";

/**
 * A deterministic (version 5, name-based) idempotency key for one logical operation, so a process
 * that crashes mid-request and starts over sends the same key and cannot charge twice:
 * `idempotencyKeyFor("order-1042", "authorize", 1)`. Change a part (e.g. the attempt number) to
 * make a deliberate new attempt after a definite failure.
 */
export function idempotencyKeyFor(...parts: Array<string | number>): string {
  return idempotencyKeyIn(DEFAULT_IDEMPOTENCY_NAMESPACE, ...parts);
}

/** `idempotencyKeyFor` in your own namespace (a GUID). */
export function idempotencyKeyIn(namespace: string, ...parts: Array<string | number>): string {
  if (!isGuid(namespace)) throw new TypeError("The idempotency key namespace must be a GUID");
  if (parts.length === 0) throw new TypeError("idempotencyKeyFor needs at least one part");
  // Length-prefixed parts, so ("a:b") and ("a", "b") never collide.
  const name = parts.map((part) => `${String(part).length}:${String(part)}`).join("|");
  const hash = createHash("sha1")
    .update(Buffer.from(namespace.replaceAll("-", ""), "hex"))
    .update(name, "utf8")
    .digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50; // version 5
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80; // RFC 4122 variant
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
