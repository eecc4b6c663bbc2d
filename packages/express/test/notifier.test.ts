import { describe, expect, it } from "vitest";
import { ChargeNotifier } from "../src/charges/notifier.js";
import type { ChargeRecord } from "../src/index.js";
import { pendingCharge } from "./support/charges-kit.js";
import { PRICES, useShops } from "./support/shop.js";

// The live-update notifier is told of every stored change. An order reference is the app's own
// text: no reference may make telling it fail (an EventEmitter keyed by reference threw for
// "error" after the change was stored, so a captured charge was answered as an error).

const shops = useShops();
const silent = {};

describe("ChargeNotifier", () => {
  it("tells nobody, and throws nothing, for a reference nobody watches, whatever its text", () => {
    const notifier = new ChargeNotifier(silent);
    for (const reference of ["error", "newListener", "removeListener", "__proto__", "constructor"]) {
      expect(() => notifier.changed(pendingCharge({ reference }))).not.toThrow();
    }
  });

  it("tells each listener of the reference once per change, until it unsubscribes", () => {
    const notifier = new ChargeNotifier(silent);
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
    const notifier = new ChargeNotifier(silent);
    const heard: ChargeRecord[] = [];
    const unsubscribe = notifier.subscribe("order-1", () => unsubscribe());
    notifier.subscribe("order-1", (charge) => heard.push(charge));
    notifier.changed(pendingCharge({ reference: "order-1" }));
    expect(heard).toHaveLength(1);
  });

  it("calls a listener of 'newListener' or 'removeListener' only with changes of that charge", () => {
    const notifier = new ChargeNotifier(silent);
    const heard: unknown[] = [];
    notifier.subscribe("newListener", (charge) => heard.push(charge));
    notifier.subscribe("removeListener", (charge) => heard.push(charge));
    const unsubscribe = notifier.subscribe("other", () => undefined);
    unsubscribe();
    expect(heard).toEqual([]); // an EventEmitter called them with event names here
    const change = pendingCharge({ reference: "newListener" });
    notifier.changed(change);
    expect(heard).toEqual([change]);
  });

  it("forgets a reference with its last listener (one entry per watched order, not per order ever watched)", () => {
    const notifier = new ChargeNotifier(silent);
    const listener = () => undefined;
    const unsubscribes = [
      notifier.subscribe("order-1", listener),
      notifier.subscribe("order-1", listener),
      notifier.subscribe("order-2", listener),
    ];
    expect(notifier.watchedReferences).toBe(2);
    unsubscribes[0]!();
    expect(notifier.watchedReferences).toBe(2);
    unsubscribes[1]!();
    unsubscribes[2]!();
    unsubscribes[2]!(); // twice: nothing more to forget
    expect(notifier.watchedReferences).toBe(0);
  });

  it("tells the other listeners and throws nothing when one listener throws; the logger hears of it", () => {
    const logged: unknown[] = [];
    const notifier = new ChargeNotifier({ error: (...args: unknown[]) => logged.push(args) });
    const heard: ChargeRecord[] = [];
    notifier.subscribe("order-1", () => {
      throw new Error("stream broke");
    });
    notifier.subscribe("order-1", (charge) => heard.push(charge));
    expect(() => notifier.changed(pendingCharge({ reference: "order-1" }))).not.toThrow();
    expect(heard).toHaveLength(1);
    expect(logged).toEqual([
      [
        "purchase-auth: a live-update listener threw; the change is stored",
        { reference: "order-1", error: "Error: stream broke" },
      ],
    ]);
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
