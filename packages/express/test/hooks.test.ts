import { describe, expect, it } from "vitest";
import { HttpProblem } from "../src/index.js";
import type { BuiltOrder, PurchaseAuthOptions, ResolvedCustomer } from "../src/options.js";
import { charge, createShopData, type ShopData, startShopApp, useShops } from "./support/shop.js";

// The app's hooks may answer with a value, a promise or any other thenable: POST /charges awaits
// only what needs awaiting, and a hook that throws (at once or later) is answered the same way.

/** A thenable that is not a native promise (some ORMs' queries are). */
const thenable = <T>(value: T): PromiseLike<T> => ({
  // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose, as some libraries return
  then: (resolve, reject) => Promise.resolve(value).then(resolve, reject),
});

function hooksOf(
  data: ShopData,
  wrap: <T>(value: T) => T | PromiseLike<T>,
): Pick<PurchaseAuthOptions, "resolveCustomer" | "buildOrder"> {
  // The options type promises values or promises; a thenable is what some libraries return.
  const hook = wrap as <T>(value: T) => T | Promise<T>;
  return {
    resolveCustomer: (req) =>
      hook<ResolvedCustomer | null>(data.customers.get(req.get("x-session") ?? "") ?? null),
    buildOrder: (_req, input) => {
      const cart = data.carts.get(input.cartId)!;
      return hook<BuiltOrder>({
        reference: cart.reference,
        currency: cart.currency,
        items: [
          { id: "beans-1kg", description: "Coffee beans 1 kg", unitPrice: "24.90", quantity: 2, vat: "14" },
        ],
      });
    },
  };
}

describe("POST /charges with the app's hooks", () => {
  const shops = useShops();

  for (const [kind, wrap] of [
    ["values", <T>(value: T) => value],
    ["promises", <T>(value: T) => Promise.resolve(value)],
    ["thenables", thenable],
  ] as const) {
    it(`charges the same when the hooks answer with ${kind}`, async () => {
      const data = createShopData(shops.sandbox());
      const app = await startShopApp(data, hooksOf(data, wrap));
      try {
        const customer = data.customer();
        const created = await charge(app, customer, { cartId: data.cart(customer) });
        expect(created.status).toBe(201);
        expect(created.json).toMatchObject({ status: "captured", amount: "49.80" });
        // Nobody signed in: 401, whatever the hook answers with.
        const anonymous = await charge(app, { ...customer, session: "nobody" }, { cartId: "x" });
        expect(anonymous.status).toBe(401);
      } finally {
        await app.close();
      }
    });
  }

  it("answers a hook's refusal the same whether it throws at once or rejects", async () => {
    const refuse = () => new HttpProblem({ status: 404, title: "Cart not found", detail: "No such cart." });
    for (const buildOrder of [
      () => {
        throw refuse();
      },
      async () => {
        throw refuse();
      },
    ]) {
      const { data, app } = await shops.shop({ buildOrder });
      const customer = data.customer();
      const refused = await charge(app, customer, { cartId: data.cart(customer) });
      expect(refused.status).toBe(404);
      expect(refused.json).toMatchObject({ title: "Cart not found" });
    }
  });
});
