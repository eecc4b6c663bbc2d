import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { idempotencyKeyFor, idempotencyKeyIn, isGuid, newIdempotencyKey } from "../src/index.js";

describe("idempotency keys", () => {
  it("generates random version 4 GUIDs", () => {
    const keys = new Set(Array.from({ length: 1000 }, newIdempotencyKey));
    expect(keys.size).toBe(1000);
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("derives the same version 5 key from the same parts, and different keys from different parts", () => {
    const key = idempotencyKeyFor("order-1042", "authorize", 1);
    expect(key).toBe(idempotencyKeyFor("order-1042", "authorize", 1));
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(idempotencyKeyFor("order-1042", "authorize", 2)).not.toBe(key);
    expect(idempotencyKeyFor("a:b")).not.toBe(idempotencyKeyFor("a", "b"));
    expect(isGuid(key)).toBe(true);
  });

  it("is a standard version 5 UUID of the length-prefixed name", () => {
    // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "15:www.example.com")
    const dns = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
    expect(idempotencyKeyIn(dns, "www.example.com")).toBe("9c7146f2-f697-5b29-9056-bbb3382bb681");
  });

  it("keeps namespaces apart", () => {
    const other = "0f8fad5b-d9cb-469f-a165-70867728950e";
    expect(idempotencyKeyIn(other, "order-1")).not.toBe(idempotencyKeyFor("order-1"));
    expect(() => idempotencyKeyIn("nope", "x")).toThrow(/GUID/);
  });

  it("derives exactly the keys of RFC 4122's name-based procedure, whatever the parts and namespaces in turn", () => {
    // Written from the RFC, as this package derived keys before: keys already stored must not change.
    const reference = (namespace: string, parts: Array<string | number>) => {
      const name = parts.map((part) => `${String(part).length}:${String(part)}`).join("|");
      const digest = createHash("sha1")
        .update(Buffer.from(namespace.replaceAll("-", ""), "hex"))
        .update(name, "utf8")
        .digest();
      digest[6] = (digest[6]! & 0x0f) | 0x50;
      digest[8] = (digest[8]! & 0x3f) | 0x80;
      const hex = digest.subarray(0, 16).toString("hex");
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    };
    const namespaces = fc.constantFrom(
      "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
      "0F8FAD5B-D9CB-469F-A165-70867728950E",
      "5d0c1a3e-8f1b-4f6e-9a43-3c2b7a9e6d10",
    );
    const part = fc.oneof(fc.string({ unit: "binary" }), fc.integer(), fc.constant(""));
    fc.assert(
      fc.property(namespaces, fc.array(part, { minLength: 1, maxLength: 5 }), (namespace, parts) => {
        expect(idempotencyKeyIn(namespace, ...parts)).toBe(reference(namespace, parts));
      }),
      { numRuns: 2_000 },
    );
  });
});
