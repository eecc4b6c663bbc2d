import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, shopEnv, startCli, tempFile } from "./support/cli.js";
import { freshDatabase } from "./support/database.js";
import { chargesByItem, openShop, type Shop, sandboxRecords } from "./support/sandbox.js";

// The built CLI (bundled from src) in a child process, against the sandbox over real HTTP.

let shop: Shop;
beforeAll(async () => {
  shop = await openShop();
});
afterAll(() => shop.sandbox.close());

function csv(rows: string[][]): string {
  return `${["item_id", "customer_token", "amount", "currency", "description", "vat"].join(",")}\n${rows.map((row) => row.join(",")).join("\n")}\n`;
}

function expectNothingSent(run: CliRun, requestsBefore: number): void {
  expect(run.code).toBe(2);
  expect(shop.sandbox.stats().requests).toBe(requestsBefore);
}

describe("purchase-auth-batch", () => {
  it("charges a CSV file and reports what the sandbox holds, declines by reason; a re-run sends nothing", async () => {
    const revoked = shop.token({ status: "Revoked" });
    const rows = [
      ["cli-1", shop.token(), "9.99", "EUR", "Plan", "21"],
      ["cli-2", shop.token(), "19.00", "EUR", '"Plan, yearly"', "21"],
      ["cli-3", revoked, "5.50", "EUR", "Plan", "0"],
      ["cli-4", shop.token({ failureReason: "PAYMENT_METHOD_EXPIRED" }), "7.25", "EUR", "Plan", "9"],
    ];
    const file = tempFile("charges.csv", csv(rows));
    const database = await freshDatabase();
    try {
      const args = [file, "--batch-id", "cli-batch", "--postgres", database.url, "--json"];
      const run = await startCli(args, shopEnv(shop));
      expect(run.stderr).not.toContain(shop.credentials.clientSecret);
      expect(run.code, run.stderr).toBe(0);
      expect(run.report).toMatchObject({
        total: 4,
        charged: 2,
        declined: { total: 2, byReason: { TOKEN_REVOKED: 1, PAYMENT_METHOD_EXPIRED: 1 } },
        unknown: 0,
        complete: true,
        sent: 4,
      });
      const byItem = chargesByItem(await sandboxRecords(shop));
      expect(byItem.get("cli-1")).toMatchObject({ succeeded: 1, captures: 1, capturedCents: 999n });
      expect(byItem.get("cli-2")).toMatchObject({ succeeded: 1, captures: 1, capturedCents: 1900n });
      expect(byItem.get("cli-3")).toBeUndefined(); // refused before an authorization existed
      expect(byItem.get("cli-4")).toMatchObject({ succeeded: 0, captures: 0 });

      const again = await startCli(args, shopEnv(shop));
      expect(again.code).toBe(0);
      expect(again.report).toMatchObject({ total: 4, charged: 2, sent: 0 });
      expect(chargesByItem(await sandboxRecords(shop)).get("cli-1")).toMatchObject({
        succeeded: 1,
        captures: 1,
      });
    } finally {
      await database.drop();
    }
  });

  it("prints a readable report, and progress on stderr; the secret may come from a file", async () => {
    const file = tempFile("charges.csv", csv([["text-1", shop.token(), "1.00", "EUR", "Plan", "0"]]));
    const secretFile = tempFile("secret", `${shop.credentials.clientSecret}\n`);
    const { PURCHASE_AUTH_CLIENT_SECRET: _fromFile, ...env } = shopEnv(shop);
    const run = await startCli([file, "--batch-id", "text", "--client-secret-file", secretFile], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Batch text: 1 item\(s\), complete/);
    expect(run.stdout).toMatch(/charged +1/);
    expect(run.stderr).toMatch(/text: \d+\/1 final/);
  });

  it("refuses bad lines before any network call, naming the line and the column", async () => {
    const before = shop.sandbox.stats().requests;
    const file = tempFile(
      "charges.csv",
      csv([
        ["ok-1", shop.token(), "9.99", "EUR", "Plan", "21"],
        ["bad-amount", shop.token(), "9.999", "EUR", "Plan", "21"],
        ["bad-token", "not-a-guid", "1.00", "EUR", "Plan", "21"],
        ["ok-1", shop.token(), "2.00", "EUR", "Plan", "21"],
      ]),
    );
    const run = await startCli([file, "--batch-id", "bad"], shopEnv(shop));
    expectNothingSent(run, before);
    expect(run.stderr).toMatch(/line 3 \(item bad-amount\): column amount: /);
    expect(run.stderr).toMatch(/line 4 \(item bad-token\): column customer_token: /);
    expect(run.stderr).toMatch(/line 5 \(item ok-1\): item_id appears before, on line 2/);
    expect(run.stderr).not.toContain("not-a-guid");
  });

  it("refuses unknown columns, bad JSON lines and bad options by name", async () => {
    const before = shop.sandbox.stats().requests;
    const wrongColumn = tempFile("charges.csv", "item_id,customer_token,amount,currency,ammount\n");
    const run1 = await startCli([wrongColumn, "--batch-id", "x"], shopEnv(shop));
    expectNothingSent(run1, before);
    expect(run1.stderr).toContain('unknown column "ammount"');

    const jsonl = tempFile("charges.jsonl", `{"itemId":"j1","customerToken":"${shop.token()}"}\n{not json\n`);
    const run2 = await startCli([jsonl, "--batch-id", "x"], shopEnv(shop));
    expectNothingSent(run2, before);
    expect(run2.stderr).toMatch(/line 1: order must be an object/);
    expect(run2.stderr).toMatch(/line 2: is not valid JSON/);

    const file = tempFile("charges.csv", csv([["o1", shop.token(), "1.00", "EUR", "Plan", "0"]]));
    for (const [option, value] of [
      ["--concurrency", "0"],
      ["--rate", "-1"],
      ["--retry-delays", "10,abc"],
    ] as const) {
      const run = await startCli([file, "--batch-id", "x", option, value], shopEnv(shop));
      expectNothingSent(run, before);
      expect(run.stderr).toContain(option);
    }
    const noBatch = await startCli([file], shopEnv(shop));
    expectNothingSent(noBatch, before);
    expect(noBatch.stderr).toContain("--batch-id is required");
    const noCredentials = await startCli([file, "--batch-id", "x"], {});
    expectNothingSent(noCredentials, before);
    expect(noCredentials.stderr).toContain("PURCHASE_AUTH_CLIENT_SECRET");
  });

  it("fails without printing the secret when the credentials are wrong", async () => {
    const file = tempFile("charges.csv", csv([["auth-1", shop.token(), "1.00", "EUR", "Plan", "0"]]));
    const secret = "wrong-secret-7f3a9c1e5b";
    const run = await startCli([file, "--batch-id", "auth", "--json"], {
      ...shopEnv(shop),
      PURCHASE_AUTH_CLIENT_SECRET: secret,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cannot run/);
    expect(run.stderr + run.stdout).not.toContain(secret);
    expect(chargesByItem(await sandboxRecords(shop)).get("auth-1")).toBeUndefined();
  });

  it("--sandbox charges the file in an embedded sandbox", async () => {
    const file = tempFile(
      "charges.jsonl",
      [1, 2, 3]
        .map((n) =>
          JSON.stringify({
            itemId: `emb-${n}`,
            customerToken: `00000000-0000-4000-8000-00000000000${n}`,
            order: {
              currency: "EUR",
              items: [{ id: "p", description: "Plan", unitPrice: "3.00", quantity: "1", vat: "0" }],
            },
          }),
        )
        .join("\n"),
    );
    const run = await startCli([file, "--batch-id", "emb", "--sandbox", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.report).toMatchObject({ total: 3, charged: 3, complete: true, sent: 3 });
  });
});
