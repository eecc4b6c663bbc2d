import { randomUUID } from "node:crypto";
import type { SandboxRequest, Simulator } from "@purchase-auth/sandbox";
import { authorizationBody, CREATE_PATH, createHeaders, TOKEN_PATH } from "./wire.js";

// The sandbox's own work for one create, without HTTP: its `handle` called in a loop in the process
// that holds it, on the request row 5's clients send. Row 5 gives a bare node:http server this much
// computation per request, to tell what the create's work costs from what serving it at a full core
// costs the transport (see sandbox-accounting.ts).

/**
 * CPU µs of this process per create through `sandbox.handle`, its stores filled first (as many
 * creates as it keeps), then `creates` measured. Requests and keys are built before the measured
 * loop; every answer must be a 200, or this throws (a loop of refusals measures nothing).
 */
export async function ownWorkMicrosPerCreate(sandbox: Simulator, creates: number): Promise<number> {
  const merchant = sandbox.createMerchant();
  const { customerToken } = sandbox.createCustomerToken({ merchantId: merchant.merchantId });
  const accessToken = await tokenOf(sandbox, merchant);
  const body = Buffer.from(JSON.stringify(authorizationBody(customerToken)));
  const { maxStoredObjects, maxIdempotencyKeys } = sandbox.options;
  const requests = (count: number) =>
    Array.from({ length: count }, (): SandboxRequest => {
      const headers: Record<string, string> = { host: "127.0.0.1" };
      for (const [name, value] of Object.entries(createHeaders(accessToken, randomUUID()))) {
        headers[name.toLowerCase()] = value; // as node:http hands them over
      }
      headers["content-length"] = String(body.byteLength);
      return { method: "POST", url: CREATE_PATH, headers, body };
    });
  await createAll(sandbox, requests(Math.max(maxStoredObjects, maxIdempotencyKeys)));
  const measured = requests(creates);
  const before = process.cpuUsage();
  await createAll(sandbox, measured);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / creates;
}

async function createAll(sandbox: Simulator, requests: readonly SandboxRequest[]): Promise<void> {
  for (const request of requests) {
    const outcome = await sandbox.handle(request);
    if (outcome.kind !== "respond" || outcome.status !== 200) {
      throw new Error(
        `own work: a create answered ${outcome.kind === "respond" ? outcome.status : "nothing"}`,
      );
    }
  }
}

async function tokenOf(
  sandbox: Simulator,
  merchant: { clientId: string; clientSecret: string; scope: string },
): Promise<string> {
  const outcome = await sandbox.handle({
    method: "POST",
    url: TOKEN_PATH,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: Buffer.from(
      new URLSearchParams({
        grant_type: "client_credentials",
        client_id: merchant.clientId,
        client_secret: merchant.clientSecret,
        scope: merchant.scope,
      }).toString(),
    ),
  });
  const token =
    outcome.kind === "respond" ? (JSON.parse(outcome.body ?? "{}") as { access_token?: unknown }) : {};
  if (typeof token.access_token !== "string") throw new Error("own work: no access token");
  return token.access_token;
}
