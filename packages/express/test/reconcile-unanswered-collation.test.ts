import type { AuthorizationRequest, PurchaseAuthClient, WriteOptions } from "@purchase-auth/core";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresChargeStore } from "../src/index.js";
import { freshSchema } from "./support/database.js";
import { chargeSentAt, nextWeek, offlineRouter } from "./support/offline-router.js";

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
    const base = Date.now() - 30 * 60_000;
    const add = (reference: string, at: number) => store.create(chargeSentAt(at, nextWeek(), { reference }));
    for (let index = 0; index < 199; index++)
      await add(`p-${String(index).padStart(3, "0")}`, base + index * 1000);
    await add("a-tie", base + 500_000);
    await add("B-tie", base + 500_000);
    await add("z-newer", base + 900_000);
    await pool.query(
      "UPDATE purchase_auth_charges SET updated_at = updated_at + interval '400 microseconds' WHERE reference IN ('a-tie', 'B-tie')",
    );
    const sent: string[] = [];
    const client = {
      authorizations: {
        create: async (_request: AuthorizationRequest, options?: WriteOptions) => {
          sent.push(options!.idempotencyKey!);
          throw new Error("unknown outcome");
        },
      },
      orders: { capture: async () => ({}) },
      verifyWebhook: () => undefined,
      close: async () => undefined,
    } as unknown as PurchaseAuthClient;
    const router = offlineRouter({ store, client, clientOptions: undefined } as never);
    const reports = [];
    for (let pass = 0; pass < 3; pass++) {
      sent.length = 0;
      reports.push(await router.reconcile());
      expect(new Set(sent).size).toBe(sent.length);
      expect(sent.length).toBe(202);
    }
    await router.close();
    expect(reports.map((report) => [report.examined, report.stillUnknown])).toEqual([
      [202, 202],
      [202, 202],
      [202, 202],
    ]);
  });
});
