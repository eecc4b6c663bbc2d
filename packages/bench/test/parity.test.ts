import {
  type AuthorizationValidationResult,
  CURRENCY_CODES,
  checkAuthorizationRequest,
} from "@purchase-auth/core";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREATE_PATH } from "../bench/wire.js";
import { type Expectation, MUTATIONS } from "./support/mutations.js";
import { fetchAccessToken, openShop, send } from "./support/sandbox.js";
import { validBodyArb, type WireBody } from "./support/wire-arbitraries.js";

// Parity: core's local validation and the sandbox's answer to the same bytes must agree, on valid
// and near-valid requests in wire form. Agreement means: both accept (the sandbox answers anything
// but 400: 200/202, or 404/422 decided after validation), or both reject with the same set of
// field + rule. Core's client is friendlier than the wire on purpose (numbers for amounts, lower
// case currency codes); those inputs are not wire form, so they are not generated.

const SEED = 4_242;

let sandbox: SandboxServer;
let customerToken: string;
let accessToken: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  const shop = openShop(sandbox); // Active, EUR, unlimited funds
  customerToken = shop.customerToken;
  accessToken = await fetchAccessToken(shop);
});
afterAll(() => sandbox?.close());

interface Verdict {
  accepted: boolean;
  /** Sorted "path rule" pairs; empty when accepted. */
  issues: string[];
}

function coreVerdict(result: AuthorizationValidationResult): Verdict {
  if (result.success) return { accepted: true, issues: [] };
  return { accepted: false, issues: result.issues.map((issue) => `${issue.path} ${issue.rule}`).sort() };
}

async function sandboxVerdict(wire: string): Promise<Verdict & { status: number }> {
  const response = await send(sandbox, "POST", CREATE_PATH, {
    headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` },
    body: wire,
  });
  if (response.status !== 400) {
    expect([200, 202, 404, 422], response.text).toContain(response.status);
    return { status: response.status, accepted: true, issues: [] };
  }
  const entries = (
    JSON.parse(response.text) as { error: { errors: Array<{ reason: string; field: string; rule: string }> } }
  ).error.errors;
  for (const entry of entries) expect(entry.reason).toBe("INVALID_REQUEST");
  return {
    status: 400,
    accepted: false,
    issues: entries.map((entry) => `${entry.field} ${entry.rule}`).sort(),
  };
}

/** Both sides judge the same bytes; returns core's verdict after asserting the sandbox agrees. */
async function assertParity(body: unknown): Promise<Verdict> {
  const wire = JSON.stringify(body);
  const local = coreVerdict(checkAuthorizationRequest(JSON.parse(wire)));
  const remote = await sandboxVerdict(wire);
  expect({ accepted: remote.accepted, issues: remote.issues }, wire.slice(0, 300)).toEqual(local);
  return local;
}

function expected(expectation: Expectation): Verdict {
  return expectation === "accepted"
    ? { accepted: true, issues: [] }
    : { accepted: false, issues: [`${expectation.path} ${expectation.rule}`] };
}

/** A JSON value to put at a field, excluding the two friendlier-than-wire inputs core converts. */
function wireValueArb(field: string): fc.Arbitrary<unknown> {
  const amount = /(unitPrice|quantity|vat)$/.test(field);
  return fc
    .oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined), fc.string({ maxLength: 60 }))
    .filter((value) => !(amount && typeof value === "number"))
    .filter(
      (value) =>
        !(
          field === "order.currency" &&
          typeof value === "string" &&
          value !== value.toUpperCase() &&
          CURRENCY_CODES.has(value.toUpperCase())
        ),
    );
}

const FIELDS = [
  "customerToken",
  "storeId",
  "order",
  "order.items",
  "order.items.0",
  "order.items.0.id",
  "order.items.0.description",
  "order.items.0.unitPrice",
  "order.items.0.quantity",
  "order.items.0.vat",
  "order.currency",
  "order.reference",
  "order.actionReference",
  "order.settlementReference",
  "order.captureMode",
  "attemptSchedule",
  "attemptSchedule.relative",
  "attemptSchedule.absolute",
  "attemptSchedule.preferSynchronous",
] as const;

/** `body` with the value at a dotted path replaced (undefined deletes it); missing parents are created. */
function replaced(body: WireBody, path: string, value: unknown): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  const keys = path.split(".");
  let target: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) {
    if (typeof target[key] !== "object" || target[key] === null) target[key] = {};
    target = target[key] as Record<string, unknown>;
  }
  const last = keys.at(-1)!;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

describe("parity of core's validation and the sandbox's 400s (wire form)", () => {
  it("every rule broken one at a time: both give exactly the expected verdict", async () => {
    const base = fc.sample(validBodyArb(customerToken), { seed: SEED, numRuns: 1 })[0]!;
    for (const mutation of MUTATIONS) {
      const verdict = await assertParity(mutation.apply(base));
      expect(verdict, mutation.name).toEqual(expected(mutation.expect));
    }
  });

  it("generated valid requests: both accept", async () => {
    await fc.assert(
      fc.asyncProperty(validBodyArb(customerToken), async (body) => {
        expect((await assertParity(body)).accepted).toBe(true);
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it("generated near-valid requests (one rule broken on a random valid body): the expected verdict on both sides", async () => {
    await fc.assert(
      fc.asyncProperty(validBodyArb(customerToken), fc.constantFrom(...MUTATIONS), async (body, mutation) => {
        expect(await assertParity(mutation.apply(body)), mutation.name).toEqual(expected(mutation.expect));
      }),
      { seed: SEED, numRuns: 250 },
    );
  });

  it("random JSON at a random field: both agree, whatever the verdict", async () => {
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(
        validBodyArb(customerToken),
        fc.constantFrom(...FIELDS).chain((field) => fc.tuple(fc.constant(field), wireValueArb(field))),
        async (body, [field, value]) => {
          if (!(await assertParity(replaced(body, field, value))).accepted) rejected++;
        },
      ),
      { seed: SEED, numRuns: 250 },
    );
    // Mostly rejections (a random value rarely fits), yet not all: both verdicts were compared.
    expect(rejected).toBeGreaterThan(100);
    expect(rejected).toBeLessThan(250);
  });
});
