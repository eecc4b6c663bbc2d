import { randomUUID } from "node:crypto";
import type { SandboxRequest, Simulator } from "@purchase-auth/sandbox";
import { cpuMicrosOfThisProcess } from "./child-rpc.js";
import { median } from "./measure.js";
import { authorizationBody, CREATE_PATH, createHeaders, TOKEN_PATH } from "./wire.js";

// The sandbox's own work for one create, without HTTP: its `handle` called in a loop in the process
// that holds it, on the request row 5's clients send. Row 5 gives a bare node:http server this much
// computation per request, to tell what the create's work costs from what serving it at a full core
// costs the transport (see sandbox-accounting.ts). `handle` returns a promise where the transport's
// path does not: a fraction of a µs per create more than the work itself.

export interface OwnWorkSettings {
  /** Fill the stores first (a smoke run does not). */
  fill: boolean;
  /** Measured windows; the figure is their median (a scavenge falls in some windows and not others). */
  windows: number;
  createsPerWindow: number;
}

/**
 * CPU µs of this process per create through `sandbox.handle`, the median of `windows` windows. First
 * the stores are filled (unless told not to): as many creates as they may still lack.
 * Each window's requests and keys are built before it is timed, and let go after it. Every answer
 * must be a 200, or this throws (a loop of refusals measures nothing).
 */
export async function ownWorkMicrosPerCreate(
  sandbox: Simulator,
  settings: OwnWorkSettings,
  sources: { cpuMicros?: () => number; newKey?: () => string } = {},
): Promise<number> {
  const { cpuMicros = cpuMicrosOfThisProcess, newKey = randomUUID } = sources;
  const merchant = sandbox.createMerchant();
  const { customerToken } = sandbox.createCustomerToken({ merchantId: merchant.merchantId });
  const accessToken = await tokenOf(sandbox, merchant);
  const body = Buffer.from(JSON.stringify(authorizationBody(customerToken)));
  const requests = (count: number) =>
    Array.from({ length: count }, (): SandboxRequest => {
      const headers: Record<string, string> = { host: "127.0.0.1" };
      for (const [name, value] of Object.entries(createHeaders(accessToken, newKey()))) {
        headers[name.toLowerCase()] = asReceived(value); // as node:http hands them over
      }
      headers["content-length"] = String(body.byteLength);
      return { method: "POST", url: CREATE_PATH, headers, body };
    });

  const { maxStoredObjects, maxIdempotencyKeys } = sandbox.options;
  // The stores hold what was created (and succeeded, for orders) up to their bounds; the idempotency
  // store's size is known. Each create here adds one of each.
  const stats = sandbox.stats();
  let toFill = settings.fill
    ? Math.max(
        maxStoredObjects - Math.min(stats.authorizations, stats.orders),
        maxIdempotencyKeys - stats.idempotencyKeys,
      )
    : 0;
  for (; toFill > 0; toFill -= settings.createsPerWindow) {
    await createAll(sandbox, requests(Math.min(toFill, settings.createsPerWindow)));
  }
  const perWindow: number[] = [];
  for (let window = 0; window < settings.windows; window++) {
    const batch = requests(settings.createsPerWindow);
    const before = cpuMicros();
    await createAll(sandbox, batch);
    perWindow.push((cpuMicros() - before) / settings.createsPerWindow);
  }
  return median(perWindow);
}

/**
 * `text` as one flat string, as node:http reads a header value off the socket. `randomUUID` and
 * template literals return trees of concatenated strings: the sandbox would flatten (or keep) each
 * at a cost no request over HTTP has (~1 µs per create in process).
 */
function asReceived(text: string): string {
  return Buffer.from(text, "latin1").toString("latin1");
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
