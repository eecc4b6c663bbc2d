import { hash, randomUUID } from "node:crypto";
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
  if (parts.length === 0) throw new TypeError("idempotencyKeyFor needs at least one part");
  const namespaceBytes = bytesOfNamespace(namespace);
  // Length-prefixed parts, so ("a:b") and ("a", "b") never collide.
  let name = "";
  for (let index = 0; index < parts.length; index++) {
    const part = String(parts[index]);
    if (index > 0) name += "|";
    name += `${part.length}:${part}`;
  }
  const nameBytes = Buffer.from(name, "utf8");
  const data = Buffer.allocUnsafe(16 + nameBytes.length);
  namespaceBytes.copy(data, 0);
  nameBytes.copy(data, 16);
  // One-shot SHA-1 (a Hash object per key cost twice as much), then the version and variant bits
  // set on the hex digits: version 5 is the 13th digit, the RFC 4122 variant the top bits of the 17th.
  const hex = hash("sha1", data, "hex");
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The namespace's 16 bytes, kept for the namespace used last (one per application, in practice). */
let lastNamespace: { text: string; bytes: Buffer } | undefined;

function bytesOfNamespace(namespace: string): Buffer {
  if (lastNamespace?.text === namespace) return lastNamespace.bytes;
  if (!isGuid(namespace)) throw new TypeError("The idempotency key namespace must be a GUID");
  lastNamespace = { text: namespace, bytes: Buffer.from(namespace.replaceAll("-", ""), "hex") };
  return lastNamespace.bytes;
}
