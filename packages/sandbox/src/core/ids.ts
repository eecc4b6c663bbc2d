import { randomBytes, randomUUID } from "node:crypto";

/** A new version 4 GUID in lower case. */
export function newGuid(): string {
  return randomUUID();
}

/** An opaque random string (URL-safe base64), for access tokens and secrets. */
export function randomOpaque(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
