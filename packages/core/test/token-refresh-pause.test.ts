import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { validRequest } from "./fixtures.js";
import { openShop, type SandboxServer, startSandbox, tokenRequestsOf } from "./sandbox-fixture.js";

// Inside the refresh margin the current token keeps serving while a background refresh runs. When
// the token endpoint is failing, that refresh must not be retried on every call: a failed try pauses
// background refreshes for a while, so a busy client does not turn every service call into a token
// request (and a warning).

let sandbox: SandboxServer;
beforeAll(async () => {
  sandbox = await startSandbox();
});
beforeEach(() => sandbox.clearFaults());
afterAll(() => sandbox.close());

describe("background token refresh while the token endpoint fails", () => {
  it("pauses after a failed try instead of requesting a token on every call", async () => {
    const warnings: string[] = [];
    const shop = openShop(sandbox, {
      now: () => sandbox.now(),
      logger: { warn: (message) => warnings.push(message) },
    });
    const request = validRequest({ customerToken: shop.customerToken });
    await shop.client.authorizations.create(request);
    expect(tokenRequestsOf(sandbox, shop.clientId)).toBe(1);

    const faultId = sandbox.injectFault({ kind: "token_endpoint_down", count: null });
    const failedTries = () => sandbox.faults().find((fault) => fault.faultId === faultId)?.fired ?? 0;
    sandbox.advanceClock(59 * 60_000); // inside the 2-minute refresh margin of a 1-hour token

    for (let i = 0; i < 50; i++) {
      // The current token still serves every call.
      await shop.client.authorizations.create(request);
      // Let any background try that this call started finish (and log) before the next call.
      await vi.waitFor(() => expect(warnings).toHaveLength(failedTries()), { timeout: 10_000 });
    }

    // One try, not one per call; one warning per failed try.
    expect(failedTries()).toBeLessThanOrEqual(2);
    expect(failedTries() + tokenRequestsOf(sandbox, shop.clientId)).toBeLessThanOrEqual(3);
    expect(warnings).toHaveLength(failedTries());
    expect(warnings.every((message) => message.includes("background token refresh failed"))).toBe(true);

    // Once the endpoint is back and the pause is over, the next call refreshes in the background.
    sandbox.clearFaults();
    sandbox.advanceClock(40_000); // past the longest pause, still before expiry
    await shop.client.authorizations.create(request);
    await vi.waitFor(() => expect(tokenRequestsOf(sandbox, shop.clientId)).toBe(2), { timeout: 10_000 });
    await shop.client.close();
  });
});
