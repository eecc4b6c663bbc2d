import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutcomeUnknownError, PurchaseAuthClient } from "../src/index.js";
import { validRequest } from "./fixtures.js";

// Specification 2.5 and 4.1: a create's 200 (performed now) carries the order id and its 202
// (accepted) does not. A 2xx of any other shape may still have charged, so it must end as an
// unknown outcome for the same key, never as a success: a "synchronous" result without an order
// once made a Medusa payment authorized with no order to capture.

/** The create's next answer: a status and the `data` of its envelope. */
let nextAnswer: { status: number; data: Record<string, string> } = { status: 202, data: {} };
let creates = 0;
let server: Server;
let baseUrl = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const isToken = req.url?.endsWith("/token") ?? false;
      if (!isToken) creates++;
      const body = isToken
        ? { token_type: "Bearer", expires_in: 3600, access_token: "t" }
        : { id: randomUUID(), data: nextAnswer.data };
      res
        .writeHead(isToken ? 200 : nextAnswer.status, { "content-type": "application/json" })
        .end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function createAnswered(status: number, data: Record<string, string>) {
  nextAnswer = { status, data };
  creates = 0;
  const client = new PurchaseAuthClient({
    baseUrl,
    clientId: randomUUID(),
    clientSecret: "secret",
    scope: "scope/.default",
    maxRetries: 2,
    retryBaseDelayMs: 0,
    retryMaxDelayMs: 1,
  });
  try {
    return await client.authorizations.create(
      validRequest({ customerToken: randomUUID(), attemptSchedule: { preferSynchronous: true } }),
    );
  } catch (error) {
    return error;
  } finally {
    await client.close();
  }
}

const authorizationId = randomUUID();
const orderId = randomUUID();

describe("the shape of a create's success answer", () => {
  it("a 200 with the order id is performed now; a 202 without one is accepted", async () => {
    await expect(createAnswered(200, { authorizationId, orderId })).resolves.toMatchObject({
      synchronous: true,
      orderId,
    });
    const accepted = await createAnswered(202, { authorizationId });
    expect(accepted).toMatchObject({ synchronous: false, authorizationId });
    expect(accepted).not.toHaveProperty("orderId");
  });

  it.each([
    ["a 200 without the order id", 200, { authorizationId }],
    ["a 202 with an order id", 202, { authorizationId, orderId }],
    ["a 201", 201, { authorizationId }],
  ])("%s is asked again with the same key, then an unknown outcome", async (_name, status, data) => {
    const error = await createAnswered(status, data);
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
    expect((error as OutcomeUnknownError).outcome).toBe("unknown");
    expect(creates).toBe(3); // the first send and both retries, all with one key
  });
});
