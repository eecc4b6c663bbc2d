import { PurchaseAuthClient } from "@purchase-auth/core";
import type { ChargeClient } from "../../src/index.js";
import type { pgBossWorld } from "./pg-boss-world.js";
import { FAST_RETRIES } from "./sandbox.js";

/** A promise and the function that resolves it. */
export function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** A client of the world's shop that answers at once (no retries). */
export const goodClient = (world: ReturnType<typeof pgBossWorld>) =>
  new PurchaseAuthClient({ ...world.shop.credentials, ...FAST_RETRIES, maxRetries: 0 });

/**
 * A client whose calls are held until `answer` is resolved; `callOut` resolves at the first call,
 * and `calledItems` lists the references called, in order.
 */
export function heldClient(world: ReturnType<typeof pgBossWorld>) {
  const good = goodClient(world);
  const callOut = deferred();
  const answer = deferred();
  const calledItems: string[] = [];
  const client: ChargeClient = {
    authorizations: {
      async create(request, options) {
        calledItems.push(String(request.order.reference));
        callOut.resolve();
        await answer.promise;
        return good.authorizations.create(request, options);
      },
    },
  };
  return { client, callOut, answer, calledItems };
}
