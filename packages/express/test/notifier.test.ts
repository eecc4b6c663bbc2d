import { describe, expect, it } from "vitest";
import { ChargeNotifier } from "../src/charges/notifier.js";
import type { ChargeRecord } from "../src/index.js";
import { pendingCharge } from "./support/charges-kit.js";
import { PRICES, useShops } from "./support/shop.js";

// The live-update notifier is told of every stored change. An order reference is the app's own
// text: no reference may make telling it fail (an EventEmitter keyed by reference threw for
// "error" after the change was stored, so a captured charge was answered as an error).

const shops = useShops();

describe("ChargeNotifier", () => {
  it("tells nobody, and throws nothing, for a reference nobody watches, whatever its text", () => {
    const notifier = new ChargeNotifier();
    for (const reference of ["error", "newListener", "removeListener", "__proto__", "constructor"]) {
      expect(() => notifier.changed(pendingCharge({ reference }))).not.toThrow();
    }
  });

  it("tells each listener of the reference once per change, until it unsubscribes", () => {
    const notifier = new ChargeNotifier();
    const heard: string[] = [];
    const unsubscribeA = notifier.subscribe("error", (charge) => heard.push(`a${charge.version}`));
    notifier.subscribe("error", (charge) => heard.push(`b${charge.version}`));
    notifier.subscribe("other", (charge) => heard.push(`other${charge.version}`));
    notifier.changed(pendingCharge({ reference: "error", version: 1 }));
    unsubscribeA();
    notifier.changed(pendingCharge({ reference: "error", version: 2 }));
    expect(heard).toEqual(["a1", "b1", "b2"]);
  });

  it("still tells the other listeners when one unsubscribes while it is told (its stream ended)", () => {
    const notifier = new ChargeNotifier();
    const heard: ChargeRecord[] = [];
    const unsubscribe = notifier.subscribe("order-1", () => unsubscribe());
    notifier.subscribe("order-1", (charge) => heard.push(charge));
    notifier.changed(pendingCharge({ reference: "order-1" }));
    expect(heard).toHaveLength(1);
  });
});

describe("router.charge with references an EventEmitter treats specially", () => {
  it("answers the captured charge for the reference 'error' and 'newListener'", async () => {
    const { data, app } = await shops.shop();
    const customer = data.customer();
    for (const reference of ["error", "newListener"]) {
      const order = {
        reference,
        currency: "EUR",
        items: [{ id: "beans-1kg", ...PRICES["beans-1kg"]!, quantity: 1 }],
      };
      const result = await app.router.charge({ customer, order });
      expect(result).toMatchObject({ started: true, charge: { status: "captured", reference } });
    }
  });
});
