import { Agent, type Dispatcher } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_PATHS,
  IdempotencyWindowPassedError,
  OutcomeUnknownError,
  outcomeOf,
  type PurchaseAuthClientOptions,
} from "../src/index.js";
import { validRequest } from "./fixtures.js";
import { openShop, type SandboxServer, startSandbox } from "./sandbox-fixture.js";

// Once an attempt may have charged, no later failure may be reported as a definite refusal: the
// caller would retry with a new key and charge twice. Both cases were found by the chaos test.

const CREATE = { method: "POST", path: DEFAULT_PATHS.authorizations };

/** An undici Agent that runs `before(n)` just before the n-th create request leaves (1-based). */
class CreateHookAgent extends Agent {
  #creates = 0;
  readonly #before: (n: number) => void;

  constructor(before: (n: number) => void) {
    super();
    this.#before = before;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (options.path === DEFAULT_PATHS.authorizations) this.#before(++this.#creates);
    return super.dispatch(options, handler);
  }
}

let sandbox: SandboxServer;
beforeAll(async () => {
  sandbox = await startSandbox();
});
beforeEach(() => sandbox.clearFaults());
afterAll(() => sandbox.close());

async function chargeOnce(
  options: Partial<PurchaseAuthClientOptions>,
  arrange: (shop: ReturnType<typeof openShop>) => void,
) {
  const shop = openShop(sandbox, options);
  await shop.client.customerTokens.get(shop.customerToken); // token cached, socket pooled
  arrange(shop);
  const error = await shop.client.authorizations
    .create(validRequest({ customerToken: shop.customerToken, attemptSchedule: { preferSynchronous: true } }))
    .then(() => undefined)
    .catch((caught: unknown) => caught);
  await shop.client.close();
  return {
    error,
    charged: sandbox.authorizations({ merchantId: shop.merchantId, status: "Succeeded" }).length,
  };
}

describe("an attempt that may have charged makes every later failure an unknown outcome", () => {
  it("a 401 after an attempt that committed unanswered", async () => {
    let revoke = (): void => undefined;
    const { error, charged } = await chargeOnce(
      {
        maxRetries: 3,
        // Attempts 2 and 3 find the bearer token revoked: 401, refresh, 401.
        dispatcher: new CreateHookAgent((n) => {
          if (n >= 2) revoke();
        }),
      },
      (shop) => {
        revoke = () => void sandbox.revokeAccessTokens({ clientId: shop.clientId });
        sandbox.injectFault({ kind: "drop_after_commit", match: CREATE, count: 1 }); // attempt 1 commits
      },
    );
    expect(charged).toBe(1);
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
    expect((error as OutcomeUnknownError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("a reset after commit, then a token endpoint outage", async () => {
    let clock = Date.now();
    const { error, charged } = await chargeOnce(
      {
        maxRetries: 0,
        now: () => clock,
        // Just before attempt 1 leaves, our clock jumps past the token's expiry: the immediate
        // retry of the reset must fetch a new token, from an endpoint that is down.
        dispatcher: new CreateHookAgent((n) => {
          if (n === 1) clock += 2 * 3600_000;
        }),
      },
      () => {
        sandbox.injectFault({ kind: "drop_after_commit", match: CREATE, count: 1 });
        sandbox.injectFault({ kind: "token_endpoint_down", count: null });
      },
    );
    expect(charged).toBe(1);
    // Unknown either way; the jump of our clock also put the key past its idempotency window, which
    // the executor checks before every attempt, so it is the kind that says "do not resend".
    expect(outcomeOf(error)).toBe("unknown");
    expect(IdempotencyWindowPassedError.isInstance(error) || OutcomeUnknownError.isInstance(error)).toBe(
      true,
    );
    expect((error as OutcomeUnknownError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });
});
