import { describe, expect, it } from "vitest";
import { newGuid } from "../src/core/ids.js";

// newGuid formats GUIDs itself (flat strings, see core/ids.ts) instead of calling crypto.randomUUID:
// its answers must still be what randomUUID's are, lower-case version 4 GUIDs, and never repeat.

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("newGuid", () => {
  it("makes lower-case version 4 GUIDs (RFC 9562 variant) across several batches of random bytes", () => {
    const ids = Array.from({ length: 3_000 }, () => newGuid()); // a batch is 1024
    for (const id of ids) expect(id).toMatch(V4);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("uses every hex digit in every free position (no digit stuck by the formatting)", () => {
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let count = 0; count < 2_000; count++) {
      const id = newGuid();
      for (let index = 0; index < id.length; index++) seen[index]!.add(id[index]!);
    }
    const sizes = seen.map((digits) => digits.size);
    const fixed = new Map([
      [8, 1],
      [13, 1],
      [14, 1],
      [18, 1],
      [19, 4],
      [23, 1],
    ]);
    expect(sizes).toEqual(sizes.map((_, index) => fixed.get(index) ?? 16));
  });
});
