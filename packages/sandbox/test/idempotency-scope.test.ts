import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { authorize, call, openShop, type RawResponse, type Shop } from "./helpers.js";

// An idempotency key is scoped by the resource, not by how its path is spelled: the same order (or
// customer token) in upper case, mixed case or with %-encoded characters is one scope. Before issue
// 11 each spelling was "another key", and one key captured the same order once per spelling.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

const keyHeader = (key: string) => ({ "Service-Idempotency-Key": key });

/** Percent-encodes the character at `index` ("%61" for "a"), in upper or lower case hex. */
function encodeAt(id: string, index: number, hexCase: "upper" | "lower" = "upper"): string {
  const hex = id.charCodeAt(index).toString(16).padStart(2, "0");
  return `${id.slice(0, index)}%${hexCase === "upper" ? hex.toUpperCase() : hex.toLowerCase()}${id.slice(index + 1)}`;
}

/** Every way of writing the same id that the sandbox resolves to the same resource. */
function spellings(id: string): Array<[string, string]> {
  const letter = [...id].findIndex((char) => /[a-f]/.test(char));
  return [
    ["lower case", id.toLowerCase()],
    ["upper case", id.toUpperCase()],
    ["mixed case", [...id].map((char, i) => (i % 2 === 0 ? char.toUpperCase() : char)).join("")],
    ["a %-encoded letter", encodeAt(id, letter)],
    ["a %-encoded hyphen, lower-case hex", encodeAt(id, 8, "lower")],
    ["every character %-encoded", [...id].map((_, i) => i).reduceRight((acc, i) => encodeAt(acc, i), id)],
  ];
}

async function manualOrder(): Promise<{ shop: Shop; orderId: string }> {
  const shop = await openShop(sandbox, { captureMode: "Manual" });
  const created = await authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } });
  expect(created.status).toBe(200);
  return { shop, orderId: created.json.data.orderId as string };
}

function sameAnswer(responses: RawResponse[]): void {
  const [first, ...rest] = responses;
  for (const response of rest) {
    expect([response.status, response.headers.location, response.text]).toEqual([
      first?.status,
      first?.headers.location,
      first?.text,
    ]);
  }
}

describe("idempotency scope: one resource, any spelling", () => {
  it.each(["capture", "refund", "cancel"] as const)(
    "%s: one key, six spellings of the order id, one write",
    async (write) => {
      const { shop, orderId } = await manualOrder();
      if (write === "refund") {
        await call(sandbox, "POST", `/manage/orders/${orderId}/capture`, { token: shop.accessToken });
      }
      const key = randomUUID();
      const responses: RawResponse[] = [];
      for (const [, spelled] of spellings(orderId)) {
        responses.push(
          await call(sandbox, "POST", `/manage/orders/${spelled}/${write}`, {
            token: shop.accessToken,
            headers: keyHeader(key),
            ...(write === "cancel" ? {} : { body: { amount: "10.00" } }),
          }),
        );
      }
      expect(responses[0]?.status).toBe(202);
      sameAnswer(responses);
      const [order] = sandbox.orders();
      const writes = order?.operations.filter((operation) => operation.type === write);
      expect(writes).toHaveLength(1);
      if (write === "capture") expect(order?.capturedAmount).toBe("10.00");
      if (write === "refund") expect(order?.refundedAmount).toBe("10.00");
    },
  );

  it.each(spellings(randomUUID()).map(([name]) => name))(
    "capture: the same key with the order id spelled with %s replays the first answer",
    async (name) => {
      const { shop, orderId } = await manualOrder();
      const spelled = new Map(spellings(orderId)).get(name) ?? "";
      const key = randomUUID();
      const capture = (id: string) =>
        call(sandbox, "POST", `/manage/orders/${id}/capture`, {
          token: shop.accessToken,
          headers: keyHeader(key),
          body: { amount: "1.00" },
        });
      const first = await capture(orderId);
      const again = await capture(spelled);
      expect(again.status).toBe(202);
      sameAnswer([first, again]);
      expect(sandbox.orders()[0]?.capturedAmount).toBe("1.00");
    },
  );

  it("customer-token cancel: one key, every spelling of the token, one cancellation and one stored answer", async () => {
    const shop = await openShop(sandbox);
    const key = randomUUID();
    const responses: RawResponse[] = [];
    for (const [, spelled] of spellings(shop.customerToken)) {
      responses.push(
        await call(sandbox, "DELETE", `/purchase/customer-tokens/${spelled}`, {
          token: shop.accessToken,
          headers: keyHeader(key),
        }),
      );
    }
    expect(responses[0]?.status).toBe(202);
    sameAnswer(responses); // the same envelope id: a replay, not a second cancellation
    const changes = sandbox.events().filter(({ event }) => event.type === "customer-token.status-changed");
    expect(changes).toHaveLength(1);
  });

  it("different orders with the same key are still different scopes", async () => {
    const first = await manualOrder();
    const second = await manualOrder();
    const key = randomUUID();
    for (const { shop, orderId } of [first, second]) {
      const response = await call(sandbox, "POST", `/manage/orders/${orderId.toUpperCase()}/capture`, {
        token: shop.accessToken,
        headers: keyHeader(key),
      });
      expect(response.status).toBe(202);
    }
    expect(sandbox.orders().map((order) => order.status)).toEqual(["Activated", "Activated"]);
  });
});
