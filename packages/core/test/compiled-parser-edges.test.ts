import { MockAgent } from "undici";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PurchaseAuthClient, safeParseFast, ValidationError } from "../src/index.js";

// Edges where the compiled fast path once differed from zod (found by an adversarial review):
// each of these failed before the compiler learned to leave such schemas to zod.

describe("string formats (z.iso.datetime, z.email, z.uuid…) are accepted as any string", () => {
  // A format schema is its own check (zod runs [inst, ...def.checks]); compileNode only reads
  // def.checks, so the format's pattern never runs on the fast path.
  it("safeParseFast agrees with zod's safeParse", () => {
    const cases: Array<[z.ZodType, string]> = [
      [z.iso.datetime({ offset: true }), "not a date"],
      [z.email(), "not an email"],
      [z.uuid(), "not-a-uuid"],
      [z.url(), "::"],
    ];
    for (const [schema, input] of cases) {
      expect(schema.safeParse(input).success).toBe(false);
      expect(safeParseFast(schema, input).success).toBe(false);
    }
  });

  function clientWithMock() {
    const mock = new MockAgent();
    mock.disableNetConnect();
    const pool = mock.get("https://svc.example");
    pool
      .intercept({ path: "/oauth2/v2.0/token", method: "POST" })
      .reply(200, { token_type: "Bearer", expires_in: 3600, access_token: "t" })
      .persist();
    const sent: string[] = [];
    pool
      .intercept({ path: (p) => p.startsWith("/manage/orders/"), method: "POST" })
      .reply((options) => {
        sent.push(String(options.path));
        return { statusCode: 202, data: "" };
      })
      .persist();
    const client = new PurchaseAuthClient({
      baseUrl: "https://svc.example",
      clientId: "id",
      clientSecret: "secret",
      scope: "x/.default",
      dispatcher: mock,
      maxRetries: 0,
    });
    return { client, sent, mock };
  }

  const write = (firstSentAt: string) => ({
    operation: "orders.capture" as const,
    method: "POST" as const,
    path: "/manage/orders/3f2504e0-4f89-11d3-9a0c-0305e82c3301/capture",
    body: "{}",
    idempotencyKey: "7c9e6679-7425-40de-944b-e07fc1f66afe",
    firstSentAt,
  });

  it("resendUnknownWrite with an unparseable firstSentAt throws our ValidationError", async () => {
    const { client, mock } = clientWithMock();
    const error = await client.resendUnknownWrite(write("not a date")).catch((e: unknown) => e);
    await mock.close();

    expect(error).toBeInstanceOf(ValidationError);
  });

  it("resendUnknownWrite refuses a firstSentAt without an offset instead of sending the key", async () => {
    const { client, sent, mock } = clientWithMock();
    // The UTC time of 3.5 hours ago (long past the one-hour window) written without an offset:
    // zod's schema ({ offset: true }) rejects it; new Date() reads it as local time, so in a zone
    // three hours west of UTC (run with TZ=Etc/GMT+3) it looks 30 minutes old.
    const firstSent = new Date(Date.now() - 3.5 * 3_600_000).toISOString().slice(0, 19);
    const error = await client.resendUnknownWrite(write(firstSent)).catch((e: unknown) => e);
    await mock.close();
    expect(error).toBeInstanceOf(ValidationError);

    expect(sent).toHaveLength(0);
  });
});

describe("a transform that uses its context", () => {
  it("safeParseFast returns zod's failure instead of throwing TypeError", () => {
    const schema = z.string().transform((value, ctx) => {
      if (value.length > 3) {
        ctx.addIssue({ code: "custom", message: "too long" });
        return z.NEVER;
      }
      return value;
    });
    expect(schema.safeParse("abcdef").success).toBe(false);

    expect(() => safeParseFast(schema, "abcdef")).not.toThrow();
  });

  it("z.preprocess whose function reports an issue", () => {
    const schema = z.preprocess((value, ctx) => {
      if (typeof value !== "string") ctx.addIssue({ code: "custom", message: "need a string" });
      return value;
    }, z.string());
    expect(schema.safeParse(5).success).toBe(false);
    expect(() => safeParseFast(schema, 5)).not.toThrow();
  });
});

describe("recursive object schemas (zod 4's getter form)", () => {
  it("safeParseFast parses them as zod does instead of overflowing the stack", () => {
    const node: z.ZodType = z.object({
      name: z.string(),
      get children() {
        return z.array(node).optional();
      },
    });
    const value = { name: "a", children: [{ name: "b" }] };
    expect(node.safeParse(value).success).toBe(true);
    expect(() => safeParseFast(node, value)).not.toThrow();
  });
});

describe("a shape key named __proto__", () => {
  it("safeParseFast output matches zod's (zod skips the key; the fast path sets the prototype)", () => {
    const schema = z.object({ ["__proto__"]: z.object({ admin: z.boolean() }) } as never) as z.ZodType;
    const input = JSON.parse('{"__proto__": {"admin": true}}');
    const zodOut = schema.safeParse(input);
    const fastOut = safeParseFast(schema, input);
    expect(zodOut.success).toBe(true);
    expect((fastOut as { data: { admin?: boolean } }).data.admin).toBe(
      (zodOut as { data: { admin?: boolean } }).data.admin,
    );
  });
});

describe("exactOptional is compiled as optional", () => {
  it("safeParseFast rejects an explicit undefined as zod does", () => {
    // $ZodExactOptional has def.type "optional" but no undefined shortcut; compileNode's "optional"
    // case lets undefined through.
    const schema = z.object({ a: z.string().exactOptional() });
    expect(schema.safeParse({ a: undefined }).success).toBe(false);
    expect(safeParseFast(schema, { a: undefined }).success).toBe(false);
  });
});

describe("a field under a symbol key", () => {
  // The compiled object parser reads fields by their string keys: a symbol-keyed field was skipped,
  // so a value zod refuses passed, and one zod keeps was dropped. Such schemas go to zod.
  it("is parsed as zod parses it", () => {
    const key = Symbol("k");
    const schema = z.object({ a: z.string(), [key]: z.string() });
    expect(safeParseFast(schema, { a: "b", [key]: 5 }).success).toBe(false);
    const parsed = safeParseFast(schema, { a: "b", [key]: "ok" });
    expect(parsed).toEqual(schema.safeParse({ a: "b", [key]: "ok" }));
    expect((parsed.data as Record<symbol, unknown>)[key]).toBe("ok");
  });
});
