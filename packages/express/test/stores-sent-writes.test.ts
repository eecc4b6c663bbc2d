import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ChargeRecord,
  type ChargeStore,
  MemoryChargeStore,
  POSTGRES_SCHEMA_SQL,
  PostgresChargeStore,
} from "../src/index.js";
import { pageQueries, SENT_WRITES } from "../src/stores/postgres-schema.js";
import type { OperationRecord } from "../src/stores/types.js";
import { freshSchema, postgresStore } from "./support/database.js";
import { newCharge } from "./support/store-contract.js";

// listSentWrites: the charges whose operation log holds a merchant write still `sent` (its answer
// lost), whatever the charge's status, in listPending's order and paging, for the reconciler to send
// again or settle. On PostgreSQL along a partial index, added to a database an earlier release made.

let database: Awaited<ReturnType<typeof freshSchema>>;
beforeAll(async () => {
  database = await freshSchema();
});
afterAll(() => database.drop());

/** A log entry of a capture of `amount` in `state`. */
function entry(sequence: string, state: OperationRecord["state"]): OperationRecord {
  return { operation: "capture", sequence, fingerprint: `f-${sequence}`, state, amount: "1.00" };
}

function withLog(reference: string, updatedAt: string, ...entries: OperationRecord[]): ChargeRecord {
  const operationLog = Object.fromEntries(entries.map((e) => [`${e.operation}:${e.sequence}`, e]));
  return newCharge({
    reference,
    updatedAt,
    status: "partially_captured",
    authorizationId: randomUUID(),
    orderId: randomUUID(),
    operationLog,
  });
}

const stores: Array<[string, () => Promise<ChargeStore>]> = [
  ["MemoryChargeStore", async () => new MemoryChargeStore()],
  ["PostgresChargeStore", () => postgresStore(database.newPool())],
];

for (const [name, makeStore] of stores) {
  describe(`${name}: listSentWrites`, () => {
    it("lists the charges with a write still sent, in listPending's order, paging after a cursor, and forgets them once settled", async () => {
      const store = await makeStore();
      const at = (second: number) => new Date(Date.UTC(2001, 0, 1, 0, 2, second)).toISOString();
      const tag = `sent-${randomUUID().slice(0, 8)}`;
      const ref = (name: string) => `${tag}-${name}`;
      const charges = [
        withLog(ref("c"), at(3), entry("1", "done"), entry("2", "sent")),
        withLog(ref("b"), at(2), entry("1", "sent")),
        withLog(ref("a"), at(2), entry("1", "sent")),
        // Settled writes only, or none: nothing to send.
        withLog(ref("settled"), at(1), entry("1", "done"), entry("2", "refused"), entry("3", "unconfirmed")),
        newCharge({ reference: ref("none"), updatedAt: at(1) }),
        // A charge past its captures still has a lost refund to settle.
        { ...withLog(ref("refunded"), at(4), entry("9", "sent")), status: "refunded" as const },
      ];
      for (const charge of charges) await store.create(charge);
      const ours = (found: ChargeRecord[]) =>
        found.map((charge) => charge.reference).filter((reference) => reference.startsWith(tag));
      const expected = ["a", "b", "c", "refunded"].map(ref);
      expect(ours(await store.listSentWrites!(100_000))).toEqual(expected);
      const first = await store.listSentWrites!(1, { updatedAt: at(0), reference: "" });
      expect(ours(first)).toEqual([ref("a")]);
      const rest = await store.listSentWrites!(100_000, {
        updatedAt: first[0]!.updatedAt,
        reference: first[0]!.reference,
      });
      expect(ours(rest)).toEqual(expected.slice(1));

      // Its last sent write done: no longer listed.
      const b = (await store.findByReference(ref("b")))!;
      const done: ChargeRecord = {
        ...b,
        operationLog: { "capture:1": entry("1", "done") },
        version: b.version + 1,
        updatedAt: at(5),
      };
      expect(await store.compareAndSet(b.version, done)).toBeDefined();
      expect(ours(await store.listSentWrites!(100_000))).toEqual(["a", "c", "refunded"].map(ref));
      expect((await store.findByReference(ref("a")))?.operationLog?.["capture:1"]?.amount).toBe("1.00");
    });
  });
}

describe("MemoryChargeStore and writes still sent", () => {
  it("never forgets a settled charge with a write still sent before the settled ones without", async () => {
    const store = new MemoryChargeStore({ maxCharges: 2 });
    const lost = {
      ...withLog("lost", new Date().toISOString(), entry("1", "sent")),
      status: "captured" as const,
    };
    await store.create(lost);
    await store.create({ ...newCharge({ reference: "done" }), status: "captured" });
    await store.create(newCharge({ reference: "new" }));
    expect(await store.findByReference("lost")).toBeDefined();
    expect(await store.findByReference("done")).toBeUndefined();
    expect((await store.listSentWrites(10)).map((charge) => charge.reference)).toEqual(["lost"]);
  });
});

describe("PostgresChargeStore and writes still sent", () => {
  /** The queries listSentWrites runs, as the store builds them. */
  const { first, after } = pageQueries(SENT_WRITES);

  it("finds them along their partial index among 20,000 charges whose writes are settled", async () => {
    const schema = await freshSchema();
    try {
      const pool = schema.newPool();
      const store = await postgresStore(pool);
      await pool.query(
        `INSERT INTO purchase_auth_charges (reference, customer_id, attempt, authorization_id, status, amount, currency, capture_mode, operations, version, operation_log, created_at, updated_at)
         SELECT 'settled-' || g, 'c', 1, gen_random_uuid()::text, 'captured', '1.00', 'EUR', 'Manual', '{"capture":1,"cancel":0,"refund":0}'::jsonb, 1,
                '{"capture:1":{"operation":"capture","sequence":1,"fingerprint":"f","state":"done"}}'::jsonb, now(), now()
         FROM generate_series(1, 20000) g`,
      );
      await store.create(withLog("lost", new Date().toISOString(), entry("1", "sent")));
      for (const analyze of [false, true]) {
        if (analyze) await pool.query("ANALYZE purchase_auth_charges");
        for (const [sql, params] of [
          [first, [200]],
          [after, [200, new Date(0).toISOString(), ""]],
        ] as const) {
          const plan = await pool.query(`EXPLAIN ${sql}`, [...params]);
          expect(plan.rows.map((row) => row["QUERY PLAN"]).join("\n")).toContain(
            "purchase_auth_charges_sent_writes",
          );
        }
      }
      expect((await store.listSentWrites(200)).map((charge) => charge.reference)).toEqual(["lost"]);
    } finally {
      await schema.drop();
    }
  });

  it("migrate() adds the index to a database an earlier release created, and its rows are found", async () => {
    const schema = await freshSchema();
    try {
      const pool = schema.newPool();
      const earlier = POSTGRES_SCHEMA_SQL.replace(
        /CREATE INDEX IF NOT EXISTS purchase_auth_charges_sent_writes[^;]*;/,
        "",
      );
      expect(earlier).not.toContain("sent_writes");
      await pool.query(earlier);
      // A write the earlier release recorded: no amount in its entry.
      const old = withLog("old", new Date().toISOString(), { ...entry("1", "sent"), amount: undefined });
      await new PostgresChargeStore({ pool }).create(old);
      const store = await postgresStore(pool);
      const indexes = await pool.query(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'purchase_auth_charges_sent_writes'",
      );
      expect(indexes.rows).toHaveLength(1);
      expect((await store.listSentWrites(200)).map((charge) => charge.reference)).toEqual(["old"]);
    } finally {
      await schema.drop();
    }
  });

  it("the README's CONCURRENTLY statement for large tables is the schema's index, and migrate() then finds it", async () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const statement = readme.match(
      /CREATE INDEX CONCURRENTLY IF NOT EXISTS purchase_auth_charges_sent_writes[^;]*;/,
    )?.[0];
    expect(statement).toBeDefined();
    const ours = POSTGRES_SCHEMA_SQL.match(
      /CREATE INDEX IF NOT EXISTS purchase_auth_charges_sent_writes[^;]*;/,
    )?.[0];
    expect(statement!.replace(" CONCURRENTLY", "")).toBe(ours);
    const schema = await freshSchema();
    try {
      const pool = schema.newPool();
      const earlier = POSTGRES_SCHEMA_SQL.replace(ours!, "");
      await pool.query(earlier);
      await pool.query(statement!);
      const store = await postgresStore(pool);
      const indexes = await pool.query(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'purchase_auth_charges_sent_writes'",
      );
      expect(indexes.rows).toHaveLength(1);
      await store.create(withLog("lost", new Date().toISOString(), entry("1", "sent")));
      expect((await store.listSentWrites(200)).map((charge) => charge.reference)).toEqual(["lost"]);
    } finally {
      await schema.drop();
    }
  });
});
