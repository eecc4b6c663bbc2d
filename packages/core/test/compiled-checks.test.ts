import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { FALL_BACK, fastParserOf } from "../src/validation/compiled-parser.js";

// A node's checks run as generated code where the runtime allows it, and as a loop where it does
// not: both must take a value exactly when zod does, pass on what a rewrite made of it, and step
// aside (FALL_BACK) for anything they cannot decide alone, such as a refinement's promise.

const modes = [
  { generateCode: true, label: "as code" },
  { generateCode: false, label: "in a loop" },
] as const;

describe.each(modes)("a node's checks, $label", ({ generateCode }) => {
  const parserOf = (schema: z.ZodType) => fastParserOf(schema, { freeze: false, generateCode });

  it("passes a value when a refinement answers truthy, like zod, and steps aside when falsy", () => {
    const schema = z.string().refine((value) => value.length);
    const parse = parserOf(schema);
    expect(parse("abc")).toBe("abc");
    expect(schema.safeParse("abc").success).toBe(true);
    expect(parse("")).toBe(FALL_BACK);
    expect(schema.safeParse("").success).toBe(false);
  });

  it("runs rewrites and refinements in order, each on what the one before gave", () => {
    const schema = z
      .string()
      .trim()
      .refine((value) => value === "a")
      .max(1);
    const parse = parserOf(schema);
    expect(parse("  a ")).toBe("a");
    expect(schema.parse("  a ")).toBe("a");
    expect(parse(" ab ")).toBe(FALL_BACK);
    expect(parse(7)).toBe(FALL_BACK);
  });

  it("steps aside for a refinement that answers with a promise (zod refuses it synchronously)", () => {
    const schema = z.string().refine(async () => true);
    expect(parserOf(schema)("a")).toBe(FALL_BACK);
    expect(() => schema.safeParse("a")).toThrow();
  });

  it("runs a check with a `when` only when it applies, and steps aside for the issue it adds", () => {
    const schema = z.object({ a: z.string(), b: z.string() }).refine((value) => value.a === value.b, {
      when: (payload) => payload.issues.length === 0,
    });
    const parse = parserOf(schema);
    expect(parse({ a: "x", b: "x" })).toEqual({ a: "x", b: "x" });
    expect(parse({ a: "x", b: "y" })).toBe(FALL_BACK);
    expect(schema.safeParse({ a: "x", b: "y" }).success).toBe(false);
  });

  it("passes a thenable that is not a promise, as zod does, and throws what a refinement throws", () => {
    // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a promise is the case here
    const thenable = z.string().refine(() => ({ then: () => undefined }));
    expect(parserOf(thenable)("a")).toBe("a");
    expect(thenable.safeParse("a").success).toBe(true);
    const throwing = z.string().refine(() => {
      throw new RangeError("refinement failed");
    });
    expect(() => parserOf(throwing)("a")).toThrow("refinement failed");
    expect(() => throwing.safeParse("a")).toThrow("refinement failed");
  });
});

describe.each(modes)("refinements and rewrites called as zod calls them, $label", ({ generateCode }) => {
  it("as methods of their definition", () => {
    const receivers: unknown[] = [];
    const schema = z
      .string()
      .refine(function (this: unknown) {
        receivers.push(this);
        return true;
      })
      .overwrite(function (this: unknown, value: string) {
        receivers.push(this);
        return value;
      });
    expect(schema.parse("a")).toBe("a");
    expect(fastParserOf(schema, { freeze: false, generateCode })("a")).toBe("a");
    expect(receivers).toHaveLength(4);
    expect(receivers[2]).toBe(receivers[0]);
    expect(receivers[3]).toBe(receivers[1]);
    expect(receivers[0]).toBeTypeOf("object");
  });
});

describe("code generation", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("builds a function of its own for each node with checks, and none fails to build", () => {
    const built: string[] = [];
    const failed: unknown[] = [];
    const RealFunction = Function;
    vi.stubGlobal(
      "Function",
      new Proxy(RealFunction, {
        construct(target, args: string[]) {
          try {
            const made = Reflect.construct(target, args);
            built.push(args[args.length - 1]!);
            return made;
          } catch (error) {
            failed.push(error);
            throw error;
          }
        },
      }),
    );
    // A new schema: compiled now, while the proxy counts.
    const schema = z.object({ a: z.string().trim().min(1), b: z.string().refine((value) => value !== "x") });
    const parse = fastParserOf(schema, { freeze: false, generateCode: true });
    expect(failed).toEqual([]);
    expect(built.filter((body) => body.includes("functions")).length).toBe(2);
    expect(built.filter((body) => body.includes("parsers")).length).toBe(1);
    expect(parse({ a: " a ", b: "y" })).toEqual({ a: "a", b: "y" });
    expect(parse({ a: " a ", b: "x" })).toBe(FALL_BACK);
  });
});
