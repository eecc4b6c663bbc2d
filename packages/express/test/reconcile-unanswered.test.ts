import { randomUUID } from "node:crypto";
import type { AuthorizationRequest, PurchaseAuthClient, WriteOptions } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { type ChargeRecord, MemoryChargeStore, type PendingCursor } from "../src/index.js";
import { chargeSentAt, nextWeek, offlineRouter } from "./support/offline-router.js";

// Pending charges without an authorization id (a lost answer, a crash mid-call) must be resent with
// their key while the service remembers it. Every reconcile pass looks at them first; after an outage
// of the service there are more than a pass takes, and they are spread over the next passes instead
// of being sent again by the sweep through all pending charges (each send may take the timeout).

/** A client from "another copy of core": records every create call, answers 202. */
function recordingClient() {
  const calls: Array<{ request: AuthorizationRequest; options: WriteOptions | undefined }> = [];
  const client = {
    authorizations: {
      create: async (request: AuthorizationRequest, options?: WriteOptions) => {
        calls.push({ request, options });
        return { synchronous: false, authorizationId: randomUUID() };
      },
    },
    orders: { capture: async () => ({}) },
    customerTokens: {},
    verifyWebhook: () => undefined,
    close: async () => undefined,
  } as unknown as PurchaseAuthClient;
  return { client, calls };
}

describe("the reconciler and unanswered charges", () => {
  it("resends the stored write-ahead request verbatim, with firstSentAt, over the withTimeout path", async () => {
    const store = new MemoryChargeStore();
    const sentAt = Date.now() - 60_000;
    const lost = chargeSentAt(sentAt, nextWeek());
    await store.create(lost);
    const { client, calls } = recordingClient();
    const router = offlineRouter({ store, client, clientOptions: undefined } as never);
    const report = await router.reconcile();
    await router.close();
    expect(report).toMatchObject({ examined: 1, resolved: 1 });
    expect(calls).toHaveLength(1);
    expect(JSON.stringify(calls[0]!.request)).toBe(JSON.stringify(lost.pendingAuthorization!.request));
    expect(Object.keys(calls[0]!.options!)).toEqual(["idempotencyKey", "signal", "firstSentAt"]);
    expect(calls[0]!.options!.firstSentAt!.getTime()).toBe(sentAt);
  });

  it("sends an unanswered charge once per pass though both sweeps list it, and counts it once", async () => {
    const store = new MemoryChargeStore();
    for (let i = 0; i < 3; i++)
      await store.create(chargeSentAt(Date.now() - 1000 * i, nextWeek(), { authorizationId: randomUUID() }));
    for (let i = 0; i < 3; i++) await store.create(chargeSentAt(Date.now() - 60_000 - i, nextWeek()));
    const { client, calls } = recordingClient();
    const router = offlineRouter({ store, client, clientOptions: undefined } as never);
    const report = await router.reconcile();
    await router.close();
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((call) => call.options!.idempotencyKey)).size).toBe(3);
    expect(report).toMatchObject({ examined: 6, resolved: 3 });
  });

  it("a store whose listUnanswered ignores `after` still reaches every unanswered charge (through the pending sweep)", async () => {
    class IgnoresAfter extends MemoryChargeStore {
      override listUnanswered(limit: number, _after?: PendingCursor): Promise<ChargeRecord[]> {
        return super.listUnanswered(limit);
      }
    }
    const store = new IgnoresAfter();
    // 300 unanswered (a service outage), all stay unknown.
    for (let i = 0; i < 300; i++) await store.create(chargeSentAt(Date.now() - 120_000 + i, nextWeek()));
    const seen = new Set<string>();
    const client = {
      authorizations: {
        create: async (_request: AuthorizationRequest, options?: WriteOptions) => {
          seen.add(options!.idempotencyKey!);
          throw Object.assign(new Error("unknown"), {});
        },
      },
      orders: { capture: async () => ({}) },
      verifyWebhook: () => undefined,
      close: async () => undefined,
    } as unknown as PurchaseAuthClient;
    const router = offlineRouter({ store, client, clientOptions: undefined } as never);
    const report = await router.reconcile();
    await router.close();
    expect(report.examined).toBe(300);
    expect(seen.size).toBe(300);
  });
});
