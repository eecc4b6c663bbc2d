import { setTimeout as sleep } from "node:timers/promises";
import {
  type AuthorizationRequestInput,
  type CreateAuthorizationResult,
  DEFAULT_PATHS,
  idempotencyKeyFor,
  OutcomeUnknownError,
  PurchaseAuthClient,
  PurchaseAuthError,
  ServiceUnavailableError,
} from "@purchase-auth/core";
import {
  type AuthorizationView,
  type FaultKind,
  type SandboxServer,
  startSandbox,
} from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openShop, type Shop } from "./support/sandbox.js";

// Chaos: thousands of logical charges through core's client while the sandbox fails about one
// request in five on purpose, drawn from its seeded generator. Afterwards the sandbox's own records
// are the judge: what the client said happened must be what happened, exactly once.
//
// The seed fixes the sequence of draws; which request meets which draw still depends on arrival
// order under concurrency, so two runs differ in detail but not in what must hold.

const SEED = 20_251_121;
const CHARGES = 2_000;
const CONCURRENCY = 32;
/** Chance per create request; together ≈ 1 − Π(1 − p) ≈ 19% of create requests are hit. */
const CREATE_FAULTS: ReadonlyArray<readonly [FaultKind, number]> = [
  ["unavailable", 0.055],
  ["drop_after_commit", 0.05],
  ["latency", 0.03],
  ["in_progress", 0.055],
  ["revoke_access_token", 0.02],
];
/** Token requests are few (one per 401 storm), so a higher rate lets outages meet refreshes. */
const TOKEN_FAULT_PROBABILITY = 0.25;
/** Beyond the client's per-attempt timeout: the attempt times out while the sandbox still works. */
const LATENCY_MS = 250;
const CLIENT_TIMING = {
  timeoutMs: 100,
  deadlineMs: 5_000,
  maxRetries: 4,
  retryBaseDelayMs: 5,
  retryMaxDelayMs: 40,
} as const;

const CREATE = { method: "POST", path: DEFAULT_PATHS.authorizations };

type Intent = "active" | "revoked" | "no_funds" | "invalid";

type Outcome =
  | { kind: "authorized"; result: CreateAuthorizationResult }
  /** A definite failure: nothing was charged. */
  | { kind: "failed"; error: PurchaseAuthError }
  /** OutcomeUnknownError or ServiceUnavailableError: repeat with the same key. */
  | { kind: "unknown"; error: PurchaseAuthError };

interface Charge {
  reference: string;
  idempotencyKey: string;
  intent: Intent;
  request: AuthorizationRequestInput;
  outcome?: Outcome;
  /** For unknown outcomes: what a later retry with the same key said. */
  resolution?: Outcome;
}

/** A fixed mix: mostly chargeable, some that decline and some invalid, so each class is populated. */
function intentOf(index: number): Intent {
  if (index % 50 === 25) return "invalid";
  if (index % 20 === 7) return "revoked";
  if (index % 20 === 13) return "no_funds";
  return "active";
}

async function attempt(client: PurchaseAuthClient, charge: Charge, idempotencyKey: string): Promise<Outcome> {
  try {
    return {
      kind: "authorized",
      result: await client.authorizations.create(charge.request, { idempotencyKey }),
    };
  } catch (error) {
    if (OutcomeUnknownError.isInstance(error) || ServiceUnavailableError.isInstance(error)) {
      return { kind: "unknown", error };
    }
    if (PurchaseAuthError.isInstance(error)) return { kind: "failed", error };
    throw error; // anything else is a bug of the client, not an outcome
  }
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

let sandbox: SandboxServer;
let shop: Shop;
let charges: Charge[];
/** The sandbox's authorizations of the merchant, by order reference. */
let records: Map<string, AuthorizationView[]>;
/** References charged already before anything was retried: what the first answers were about. */
let chargedBeforeResolution: Set<string>;
let firedByKind: Map<FaultKind, number>;
let serviceRequests: number;

beforeAll(async () => {
  sandbox = await startSandbox({ seed: SEED });
  shop = openShop(sandbox);
  const tokens: Record<Exclude<Intent, "invalid">, string> = {
    active: shop.customerToken,
    revoked: shop.token({ status: "Revoked" }),
    no_funds: shop.token({ funds: "0.00" }),
  };
  charges = Array.from({ length: CHARGES }, (_, index) => {
    const reference = `chaos-${index}`;
    const intent = intentOf(index);
    return {
      reference,
      intent,
      idempotencyKey: idempotencyKeyFor(reference, "authorize", 1),
      request: {
        customerToken: tokens[intent === "invalid" ? "active" : intent],
        order: {
          currency: "EUR",
          reference,
          items: [
            {
              id: `sku-${index % 7}`,
              description: "Coffee beans 1 kg",
              unitPrice: "24.90",
              quantity: 1 + (index % 3),
              vat: intent === "invalid" ? "100.01" : "14",
            },
          ],
        },
        attemptSchedule: { preferSynchronous: true },
      },
    };
  });

  const client = new PurchaseAuthClient({ ...shop.clientOptions, ...CLIENT_TIMING });
  await client.customerTokens.get(shop.customerToken); // a token before the chaos starts
  for (const [kind, probability] of CREATE_FAULTS) {
    sandbox.injectFault({
      kind,
      match: CREATE,
      probability,
      ...(kind === "latency" ? { latencyMs: LATENCY_MS } : {}),
    });
  }
  sandbox.injectFault({
    kind: "token_endpoint_down",
    match: { path: DEFAULT_PATHS.token },
    probability: TOKEN_FAULT_PROBABILITY,
  });
  const requestsBefore = sandbox.stats().requests;

  await inParallel(charges, CONCURRENCY, async (charge) => {
    charge.outcome = await attempt(client, charge, charge.idempotencyKey);
  });

  serviceRequests = sandbox.stats().requests - requestsBefore;
  firedByKind = new Map(sandbox.faults().map((fault) => [fault.kind, fault.fired]));
  sandbox.clearFaults();
  await client.close();

  // Later, with the faults gone: every unknown outcome is asked again with the SAME key. A latency
  // fault may still hold a key for up to LATENCY_MS; wait that out rather than race it.
  await sleep(LATENCY_MS * 2);
  chargedBeforeResolution = new Set(
    sandbox
      .authorizations({ merchantId: shop.merchantId, status: "Succeeded" })
      .map((record) => record.reference ?? ""),
  );
  const resolver = new PurchaseAuthClient({ ...shop.clientOptions, maxRetries: 5, retryBaseDelayMs: 50 });
  await inParallel(toResolve(), 8, async (charge) => {
    charge.resolution = await attempt(resolver, charge, errorOf(charge.outcome)?.idempotencyKey ?? "");
  });
  await resolver.close();

  records = new Map();
  for (const record of sandbox.authorizations({ merchantId: shop.merchantId })) {
    const reference = record.reference ?? "(none)";
    records.set(reference, [...(records.get(reference) ?? []), record]);
  }
  console.log(summary());
}, 120_000);

afterAll(() => sandbox?.close());

/** The error of an outcome that is not a success. */
function errorOf(outcome: Outcome | undefined): PurchaseAuthError | undefined {
  return outcome === undefined || outcome.kind === "authorized" ? undefined : outcome.error;
}

function withOutcome(kind: Outcome["kind"]): Charge[] {
  return charges.filter((charge) => charge.outcome?.kind === kind);
}

function toResolve(): Charge[] {
  return withOutcome("unknown");
}

function succeeded(reference: string): AuthorizationView[] {
  return (records.get(reference) ?? []).filter((record) => record.status === "Succeeded");
}

function told(charge: Charge): boolean {
  return charge.outcome?.kind === "authorized" || charge.resolution?.kind === "authorized";
}

function summary(): string {
  const failed = withOutcome("failed");
  const byError = (name: string) => failed.filter((charge) => errorOf(charge.outcome)?.name === name).length;
  const resolved = toResolve().filter((charge) => charge.resolution?.kind === "authorized").length;
  const duplicates = [...records.values()].filter((list) => list.length > 1).length;
  const lost = charges.filter((charge) => told(charge) && succeeded(charge.reference).length === 0).length;
  const fired = [...firedByKind].map(([kind, times]) => `${kind} ${times}`).join(", ");
  return [
    `chaos: seed=${SEED}, charges=${CHARGES}, concurrency=${CONCURRENCY}, authorized=${withOutcome("authorized").length}, ` +
      `failed=${failed.length} (declined ${byError("DeclinedError")}, invalid ${byError("ValidationError")}, refused ${byError("AuthenticationError")}), ` +
      `unknown=${withOutcome("unknown").length} (${toResolve().filter((charge) => chargedBeforeResolution.has(charge.reference)).length} of them charged) ` +
      `→ same-key retries resolved ${resolved} to authorized, duplicates=${duplicates}, lost=${lost}`,
    `chaos: ${serviceRequests} service requests; faults fired: ${fired}`,
  ].join("\n");
}

describe(`chaos: ${CHARGES} charges while about 20% of requests fail on purpose (seed ${SEED})`, () => {
  it("really injected every kind of fault, at about the intended rate", () => {
    for (const kind of [...CREATE_FAULTS.map(([kind]) => kind), "token_endpoint_down" as const]) {
      expect(firedByKind.get(kind), kind).toBeGreaterThan(0);
    }
    const createFaults = CREATE_FAULTS.reduce((sum, [kind]) => sum + (firedByKind.get(kind) ?? 0), 0);
    expect(createFaults / serviceRequests).toBeGreaterThan(0.1);
    expect(createFaults / serviceRequests).toBeLessThan(0.3);
  });

  it("produced every class of outcome", () => {
    expect(withOutcome("authorized").length).toBeGreaterThan(CHARGES / 2);
    expect(withOutcome("failed").length).toBeGreaterThan(0);
    expect(withOutcome("unknown").length).toBeGreaterThan(0);
  });

  it("every charge reported authorized exists exactly once, as the authorization the client reported", () => {
    for (const charge of withOutcome("authorized")) {
      const found = records.get(charge.reference) ?? [];
      expect(found, charge.reference).toHaveLength(1);
      const result = charge.outcome?.kind === "authorized" ? charge.outcome.result : undefined;
      expect(found[0]).toMatchObject({
        status: "Succeeded",
        authorizationId: result?.authorizationId,
        idempotencyKey: charge.idempotencyKey,
      });
    }
  });

  it("no charge reported failed took money", () => {
    const ordered = new Set(
      sandbox.orders({ merchantId: shop.merchantId }).map((order) => order.authorizationId),
    );
    for (const charge of withOutcome("failed")) {
      expect(succeeded(charge.reference), `${charge.reference}: ${errorOf(charge.outcome)?.name}`).toEqual(
        [],
      );
      for (const record of records.get(charge.reference) ?? [])
        expect(ordered.has(record.authorizationId)).toBe(false);
    }
  });

  it("failed only for the reasons the mix allows", () => {
    const allowed: Record<Intent, string[]> = {
      // The revocation fault revokes the token every in-flight call shares; a call that meets it
      // again after its one refresh is refused (401, nothing processed).
      active: ["AuthenticationError"],
      revoked: ["DeclinedError:TOKEN_REVOKED", "AuthenticationError"],
      no_funds: ["DeclinedError:PAYMENT_METHOD_NO_FUNDS", "AuthenticationError"],
      invalid: ["ValidationError"],
    };
    for (const charge of withOutcome("failed")) {
      const error = errorOf(charge.outcome);
      const name = error?.name === "DeclinedError" ? `${error.name}:${error.reason}` : error?.name;
      expect(allowed[charge.intent], `${charge.reference}: ${name}`).toContain(name);
    }
    for (const charge of charges.filter((c) => c.intent === "invalid")) {
      expect(charge.outcome?.kind).toBe("failed");
      expect(records.has(charge.reference)).toBe(false); // rejected before the network
    }
  });

  it("every unknown outcome carries its key and, retried later with it, resolves to exactly one authorization", () => {
    for (const charge of toResolve()) {
      expect(errorOf(charge.outcome)?.idempotencyKey, charge.reference).toBe(charge.idempotencyKey);
      const resolution = charge.resolution;
      if (charge.intent === "active") {
        expect(resolution?.kind, charge.reference).toBe("authorized");
        const found = records.get(charge.reference) ?? [];
        expect(found, charge.reference).toHaveLength(1);
        const result = resolution?.kind === "authorized" ? resolution.result : undefined;
        expect(result?.idempotencyKey).toBe(charge.idempotencyKey);
        expect(found[0]).toMatchObject({ status: "Succeeded", authorizationId: result?.authorizationId });
      } else {
        // A declining token stays declined: at most its one failed attempt is on record.
        expect(resolution?.kind, charge.reference).toBe("failed");
        expect(succeeded(charge.reference)).toEqual([]);
      }
    }
  });

  it("has no duplicates and loses nothing", () => {
    const duplicated = [...records].filter(([, list]) => list.length > 1).map(([reference]) => reference);
    expect(duplicated).toEqual([]);
    const known = new Set(charges.map((charge) => charge.reference));
    expect([...records.keys()].filter((reference) => !known.has(reference))).toEqual([]);
    const lost = charges.filter((charge) => told(charge) && succeeded(charge.reference).length === 0);
    expect(lost.map((charge) => charge.reference)).toEqual([]);
    const untold = charges.filter((charge) => succeeded(charge.reference).length > 0 && !told(charge));
    expect(untold.map((charge) => charge.reference)).toEqual([]);
  });
});
