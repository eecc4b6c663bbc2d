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
});
