import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { TestDatabaseUtils } from "@medusajs/test-utils";
import { RECORDED_WRITE_GRACE_MS, reconcileUnknownOutcomes } from "@purchase-auth/medusa/workflows";
import { expect } from "vitest";
import { orderWithPayments } from "./checkout";
import { holdWebhooks } from "./hold-webhooks";
import type { ShopSuite } from "./shop-suite";
import { eventually } from "./store-api";

// What the tests of captures and refunds Medusa recorded but never sent (a store killed between its
// row and the provider call) share: the crash itself, in a real process killed with SIGKILL, the
// reconcile job as it runs once the grace for calls on their way has passed, and reads of Medusa's
// rows and the order's transactions straight from the database.

/** The `created_by` the plugin gives the captures and refunds it records itself. */
export const RECORDED_BY_PLUGIN = "purchase-auth";

const CHILD = fileURLToPath(new URL("./payment-module-process.cjs", import.meta.url));

/** What the tools need of the file's suite (shop-suite.ts). */
export type RecordedWritesWorld = Omit<ShopSuite, "api">;

export function recordedWrites(world: RecordedWritesWorld) {
  const { container } = world;

  const serviceOrderOf = (payment: { data: Record<string, unknown> }) =>
    world
      .sandbox()
      .orders()
      .find((o) => o.orderId === payment.data.order_id)!;

  async function paymentOf(orderId: string) {
    const order = await orderWithPayments(world.shop(), orderId);
    const [payment] = order.payment_collections[0]!.payments;
    return payment!;
  }

  /** The job as it runs once the grace for calls on their way has passed (or, `early`, before). */
  const runJob = (early = false) =>
    reconcileUnknownOutcomes(
      container(),
      new Date(Date.now() + (early ? 0 : RECORDED_WRITE_GRACE_MS + 60_000)),
    );

  /** The order's live transactions of captures (or refunds), by amount. */
  async function transactionsOf(orderId: string, reference: "capture" | "refund") {
    const transactions = await container()
      .resolve(Modules.ORDER)
      .listOrderTransactions({ order_id: orderId });
    return transactions
      .filter((t) => t.reference === reference)
      .map((t) => Number(t.amount))
      .sort((a, b) => a - b);
  }

  const pg = () =>
    container().resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as {
      raw(sql: string, bindings: unknown[]): Promise<{ rows: Array<{ count: string }> }>;
    };

  /**
   * How many live rows of `table` (capture or refund) payment `paymentId` has, or (`setAside`) rows
   * the job set aside for their redo, read from the database.
   */
  async function rowsOf(table: "capture" | "refund", paymentId: string, setAside = false): Promise<number> {
    const { rows } = await pg().raw(
      `select count(*) from ${table} where payment_id = ? and deleted_at is ${setAside ? "not " : ""}null`,
      [paymentId],
    );
    return Number(rows[0]!.count);
  }

  /**
   * Runs Medusa's capture or refund of `amount` on payment `paymentId` in a process of its own, and
   * kills it (SIGKILL) once its row is committed. Meanwhile every read of an order at the service
   * is held (its provider reads the order before it sends anything), so nothing was sent. A read of
   * the store's own (a webhook followed) is only held a while. `createdBy` records it as someone
   * else did (the plugin's mark, as for the refund of a canceled order's capture).
   */
  async function crashDuring(
    operation: "capture" | "refund",
    paymentId: string,
    amount: number,
    createdBy?: string,
  ) {
    const rowsBefore = await rowsOf(operation, paymentId);
    const sandbox = world.sandbox();
    const merchant = world.merchant();
    sandbox.injectFault({
      kind: "latency",
      match: { method: "GET", path: "/manage/orders/" },
      count: null,
      latencyMs: 5_000,
    });
    let child: ChildProcess | undefined;
    const output: string[] = [];
    try {
      child = spawn(process.execPath, [CHILD], {
        cwd: process.cwd(),
        env: {
          ...process.env,
          PAYMENT_MODULE_TASK: JSON.stringify({
            databaseUrl: TestDatabaseUtils.getDatabaseURL(world.dbName),
            providerOptions: {
              baseUrl: sandbox.url,
              clientId: merchant.clientId,
              clientSecret: merchant.clientSecret,
              scope: merchant.scope,
              webhookSecret: world.webhookSecret,
            },
            operation,
            paymentId,
            amount,
            createdBy,
          }),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout!.on("data", (chunk) => output.push(String(chunk)));
      child.stderr!.on("data", (chunk) => output.push(String(chunk)));
      const exited = once(child, "exit");
      await eventually(async () => {
        if (child!.exitCode !== null) throw new Error(`the process ended first: ${output.join("")}`);
        return (await rowsOf(operation, paymentId)) > rowsBefore ? true : undefined;
      }, 90_000);
      child.kill("SIGKILL");
      const [, signal] = await exited;
      expect(signal).toBe("SIGKILL");
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      sandbox.clearFaults();
    }
  }

  /** Runs `work` with the service's webhooks kept from the store (no follow records anything meanwhile). */
  async function withWebhooksHeld<T>(work: () => Promise<T>): Promise<T> {
    const sandbox = world.sandbox();
    const { merchantId } = world.merchant();
    const sink = await holdWebhooks();
    sandbox.setWebhooks({ merchantId, urls: [sink.url], secrets: [world.webhookSecret] });
    try {
      return await work();
    } finally {
      sandbox.setWebhooks({ merchantId, urls: [world.webhookUrl()], secrets: [world.webhookSecret] });
      await sink.close();
    }
  }

  return { serviceOrderOf, paymentOf, runJob, transactionsOf, pg, rowsOf, crashDuring, withWebhooksHeld };
}
