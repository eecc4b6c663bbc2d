import { afterEach, describe, expect, it } from "vitest";
import { PostgresChargeStore } from "../src/index.js";
import { freshSchema } from "./support/database.js";
import { nextWeek, offlineRouter, sandboxChargeSentAt } from "./support/offline-router.js";
import { recordingClient } from "./support/recording-client.js";
import { createShopData, useShops } from "./support/shop.js";

const shops = useShops();
afterEach(() => shops.sandbox().clearFaults());

const databases: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
afterEach(async () => {
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

describe("the unanswered sweep over PostgreSQL (collation, microseconds, ties)", () => {
  it("resends every unanswered charge in every pass, each once", async () => {
    const database = await freshSchema();
    databases.push(database);
    const pool = database.newPool();
    const store = new PostgresChargeStore({ pool });
    await store.migrate();
    await pool.query(
      `ALTER TABLE purchase_auth_charges ALTER COLUMN reference TYPE text COLLATE "en-US-x-icu"`,
    );
    const sandbox = shops.sandbox();
    const data = createShopData(sandbox);
    const { customerToken } = data.customer();
    const base = Date.now() - 30 * 60_000;
    const keys: string[] = [];
    const add = (reference: string, at: number) => {
      const charge = sandboxChargeSentAt(customerToken, at, nextWeek(), { reference });
      keys.push(charge.pendingAuthorization!.idempotencyKey);
      return store.create(charge);
    };
    for (let index = 0; index < 199; index++)
      await add(`p-${String(index).padStart(3, "0")}`, base + index * 1000);
    await add("a-tie", base + 500_000);
    await add("B-tie", base + 500_000);
    await add("z-newer", base + 900_000);
    await pool.query(
      "UPDATE purchase_auth_charges SET updated_at = updated_at + interval '400 microseconds' WHERE reference IN ('a-tie', 'B-tie')",
    );
    // The service makes every authorization and every answer is lost: the outcomes stay unknown.
    sandbox.injectFault({
      kind: "drop_after_commit",
      match: { path: "/purchase/authorizations" },
      count: null,
    });
    // Records the key of each send (a send is one create call, the client's own retries within it).
    const {
      client,
      calls: sent,
      close,
    } = recordingClient(data, {
      maxRetries: 1,
      retryBaseDelayMs: 5,
      retryMaxDelayMs: 50,
    });
    const router = offlineRouter({ store, client, clientOptions: undefined } as never);
    const reports = [];
    for (let pass = 0; pass < 3; pass++) {
      sent.length = 0;
      reports.push(await router.reconcile());
      const passKeys = sent.map((call) => call.options!.idempotencyKey!);
      expect(new Set(passKeys).size).toBe(passKeys.length);
      expect(passKeys.length).toBe(202);
    }
    await close();
    await router.close();
    expect(reports.map((report) => [report.examined, report.stillUnknown])).toEqual([
      [202, 202],
      [202, 202],
      [202, 202],
    ]);
    // Every key reached the service, each made one authorization there.
    const reached = sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(reached.map((authorization) => authorization.idempotencyKey).sort()).toEqual(keys.sort());
  }, 60_000);
});
