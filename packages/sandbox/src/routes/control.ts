import { SandboxControlError } from "../control/errors.js";
import { fields } from "../control/fields.js";
import { readAuthorizationFilter, readOrderFilter, readTokenStatus } from "../control/input.js";
import type { SandboxControl } from "../control/types.js";
import type { DemoSeed } from "../demo.js";
import { jsonResponse } from "../http/envelopes.js";
import type { RouteParams } from "../http/router.js";
import type { ApiResponse } from "../http/types.js";

/** A control request: its JSON body (undefined when empty), query and path parameters. */
export interface ControlCall {
  body: unknown;
  query: URLSearchParams;
  params: RouteParams;
}

export interface ControlRoute {
  method: string;
  path: string;
  handle(call: ControlCall): ApiResponse | Promise<ApiResponse>;
}

/** The control methods check their input themselves (it may come from untyped code too). */
function untrusted<T>(body: unknown): T {
  return body as T;
}

/**
 * The HTTP form of the control surface, under /sandbox (test-only, no authentication). Each route's
 * JSON answer is what the programmatic method returns; see the table in the README.
 */
export function controlRoutes(control: SandboxControl, demo: () => DemoSeed | undefined): ControlRoute[] {
  const ok = (value: unknown): ApiResponse => jsonResponse(200, value ?? {});
  const clock = (now: number) => ok({ now, nowIso: new Date(now).toISOString() });
  const token = (params: RouteParams) => params.customerToken ?? "";

  return [
    {
      method: "POST",
      path: "/sandbox/merchants",
      handle: ({ body }) => ok(control.createMerchant(untrusted(body))),
    },
    {
      method: "POST",
      path: "/sandbox/api-clients",
      handle: ({ body }) => ok(control.createApiClient(untrusted(body))),
    },
    {
      method: "POST",
      path: "/sandbox/customer-tokens",
      handle: ({ body }) => ok(control.createCustomerToken(untrusted(body))),
    },
    {
      method: "GET",
      path: "/sandbox/customer-tokens/{customerToken}",
      handle: ({ params }) => ok(control.getCustomerToken(token(params))),
    },
    {
      method: "PATCH",
      path: "/sandbox/customer-tokens/{customerToken}",
      handle: ({ params, body }) => ok(control.updateCustomerToken(token(params), untrusted(body))),
    },
    {
      method: "POST",
      path: "/sandbox/customer-tokens/{customerToken}/status",
      handle: ({ params, body }) =>
        ok(control.setCustomerTokenStatus(token(params), readTokenStatus(fields(body, ["status"]).status))),
    },
    {
      method: "POST",
      path: "/sandbox/webhooks",
      handle: ({ body }) => ok(control.setWebhooks(untrusted(body))),
    },
    {
      method: "POST",
      path: "/sandbox/webhook-delivery",
      handle: ({ body }) => ok(control.setWebhookDelivery(untrusted(body))),
    },
    { method: "GET", path: "/sandbox/clock", handle: () => clock(control.now()) },
    {
      method: "POST",
      path: "/sandbox/clock/advance",
      // The method checks the range (it knows the current virtual time).
      handle: ({ body }) => clock(control.advanceClock(fields(body, ["ms"]).ms as number)),
    },
    { method: "GET", path: "/sandbox/faults", handle: () => ok(control.faults()) },
    {
      method: "POST",
      path: "/sandbox/faults",
      handle: ({ body }) => ok({ faultId: control.injectFault(untrusted(body)) }),
    },
    { method: "DELETE", path: "/sandbox/faults", handle: () => ok(control.clearFaults()) },
    {
      method: "POST",
      path: "/sandbox/access-tokens/revoke",
      handle: ({ body }) => ok({ revoked: control.revokeAccessTokens(untrusted(body)) }),
    },
    {
      method: "GET",
      path: "/sandbox/authorizations",
      handle: ({ query }) => ok(control.authorizations(readAuthorizationFilter(query))),
    },
    { method: "GET", path: "/sandbox/attempts", handle: () => ok(control.attempts()) },
    {
      method: "GET",
      path: "/sandbox/orders",
      handle: ({ query }) => ok(control.orders(readOrderFilter(query))),
    },
    { method: "GET", path: "/sandbox/events", handle: () => ok(control.events()) },
    { method: "GET", path: "/sandbox/webhook-deliveries", handle: () => ok(control.webhookDeliveries()) },
    { method: "GET", path: "/sandbox/token-requests", handle: () => ok(control.tokenRequests()) },
    { method: "GET", path: "/sandbox/stats", handle: () => ok(control.stats()) },
    {
      method: "POST",
      path: "/sandbox/settle",
      handle: async () => {
        await control.settle();
        return ok({});
      },
    },
    { method: "POST", path: "/sandbox/reset", handle: () => ok(control.reset()) },
    {
      method: "GET",
      path: "/sandbox/demo",
      handle: () => {
        const seed = demo();
        if (seed === undefined)
          throw new SandboxControlError(404, "the sandbox was started without demo data");
        return ok(seed);
      },
    },
  ];
}
