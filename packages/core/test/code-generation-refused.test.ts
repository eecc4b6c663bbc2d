import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";

// Where the runtime does not build code from text (a Content-Security-Policy without 'unsafe-eval'
// throws an EvalError, a locked-down realm such as SES a TypeError) or the app told zod not to
// (`jitless`), the fast path takes its loops, with the same answers, and asks the runtime once:
// each refusal may also send a violation report. The compiler is imported afresh for each case,
// since the answer is remembered for the module's life.

type CompiledParser = typeof import("../src/validation/compiled-parser.js");

/** A `Function` that refuses with `error`; counts the attempts to build the compiler's templates. */
function refuseCodeGeneration(error: () => Error) {
  const attempts = { templates: 0, all: 0 };
  vi.stubGlobal(
    "Function",
    new Proxy(Function, {
      construct(_target, args: string[]) {
        attempts.all++;
        // Ours name FALL_BACK among their parameters; a probe has none.
        if (args.includes("FALL_BACK")) attempts.templates++;
        throw error();
      },
    }),
  );
  return attempts;
}

function schemas() {
  return {
    order: z.object({
      a: z.string().trim().min(1),
      b: z.string().refine((value) => value !== "x"),
      c: z.array(z.object({ d: z.string().max(3) })),
    }),
    other: z.object({ e: z.string().trim() }),
  };
}

function expectLikeZod(
  { fastParserOf, FALL_BACK }: CompiledParser,
  attempts: { all: number; templates: number },
) {
  const { order, other } = schemas();
  const before = attempts.all;
  const parse = fastParserOf(order, { freeze: false, generateCode: true });
  const parseOther = fastParserOf(other, { freeze: true, generateCode: true });
  const asked = attempts.all - before;
  const valid = { a: " a ", b: "y", c: [{ d: "abc" }] };
  expect(parse({ ...valid, b: "x" })).toBe(FALL_BACK);
  expect(parse({ ...valid, c: [{ d: "abcd" }] })).toBe(FALL_BACK);
  expect(parseOther({ e: " e " })).toEqual({ e: "e" });
  expect(parse(valid)).toEqual(order.parse(valid));
  return asked;
}

describe("a runtime or an app that does not let code be generated", () => {
  beforeEach(() => {
    vi.resetModules();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    z.config({ jitless: false });
  });

  it("a CSP's EvalError: one probe, no template tried, the same answers", async () => {
    const attempts = refuseCodeGeneration(() => new EvalError("Code generation from strings disallowed"));
    const asked = expectLikeZod(await import("../src/validation/compiled-parser.js"), attempts);
    expect(attempts.templates).toBe(0);
    expect(asked).toBe(1);
  });

  it("a locked-down realm's TypeError: the same", async () => {
    const attempts = refuseCodeGeneration(() => new TypeError("Function constructor is not allowed"));
    const asked = expectLikeZod(await import("../src/validation/compiled-parser.js"), attempts);
    expect(attempts.templates).toBe(0);
    expect(asked).toBe(1);
  });

  it("zod told to be jitless: nothing is asked at all", async () => {
    z.config({ jitless: true });
    const attempts = refuseCodeGeneration(() => new EvalError("not expected to be asked"));
    const compiled = await import("../src/validation/compiled-parser.js");
    const { order } = schemas();
    compiled.fastParserOf(order, { freeze: false, generateCode: true });
    expect(attempts.all).toBe(0);
  });
});
