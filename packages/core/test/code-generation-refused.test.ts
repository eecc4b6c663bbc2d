import { afterAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { FALL_BACK, fastParserOf } from "../src/validation/compiled-parser.js";

// Where the runtime refuses to build code from text (a Content-Security-Policy without
// 'unsafe-eval' throws an EvalError), the fast path takes its loops, with the same answers, and
// asks once: each refusal may also send a violation report. In a file of its own: the refusal is
// remembered for the rest of the module's life.

describe("a runtime that refuses to generate code", () => {
  afterAll(() => {
    vi.unstubAllGlobals();
  });

  it("parses with the loops, the same as zod, after one refused attempt", () => {
    let attempts = 0;
    vi.stubGlobal(
      "Function",
      new Proxy(Function, {
        construct(_target, args: string[]) {
          // Ours name FALL_BACK among their parameters; zod asks once for itself.
          if (args.includes("FALL_BACK")) attempts++;
          throw new EvalError("Code generation from strings disallowed for this context");
        },
      }),
    );
    const schema = z.object({
      a: z.string().trim().min(1),
      b: z.string().refine((value) => value !== "x"),
      c: z.array(z.object({ d: z.string().max(3) })),
    });
    const parse = fastParserOf(schema, { freeze: false, generateCode: true });
    const other = fastParserOf(z.object({ e: z.string().trim() }), { freeze: true, generateCode: true });
    expect(attempts).toBe(1);
    const valid = { a: " a ", b: "y", c: [{ d: "abc" }] };
    expect(parse(valid)).toEqual(schema.parse(valid));
    expect(parse({ ...valid, b: "x" })).toBe(FALL_BACK);
    expect(parse({ ...valid, c: [{ d: "abcd" }] })).toBe(FALL_BACK);
    expect(other({ e: " e " })).toEqual({ e: "e" });
  });
});
