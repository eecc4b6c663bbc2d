import { DEFAULT_PATHS } from "@purchase-auth/core";
import type { SandboxContext } from "../context.js";
import { SandboxControlError } from "../control/errors.js";
import type { SandboxControl } from "../control/types.js";
import type { DemoSeed } from "../demo.js";
import type { AuthorizationProcessor } from "../domain/authorization-processor.js";
import { createAuthorizationRoute } from "../routes/authorizations.js";
import { type ControlCall, controlRoutes } from "../routes/control.js";
import { cancelCustomerTokenRoute, getCustomerTokenRoute } from "../routes/customer-tokens.js";
import { cancelOrderRoute, captureOrderRoute, getOrderRoute, refundOrderRoute } from "../routes/orders.js";
import type { ServiceRoute } from "../routes/service-route.js";
import { parseJsonBody } from "./body.js";
import { errorResponse } from "./envelopes.js";
import { ServicePipeline } from "./pipeline.js";
import { Router, resourceOf } from "./router.js";
import type { ApiResponse, SandboxOutcome, SandboxRequest } from "./types.js";

type RouteTarget =
  | { kind: "token" }
  | { kind: "service"; route: ServiceRoute }
  | { kind: "control"; handle: (call: ControlCall) => ApiResponse | Promise<ApiResponse> };

/**
 * Answers the simulator's HTTP requests: routes each to the token endpoint, a service route (through
 * the pipeline of supplement D) or a control route.
 */
export class RequestHandler {
  readonly #ctx: SandboxContext;
  readonly #pipeline: ServicePipeline;
  readonly #router = new Router<RouteTarget>();

  constructor(
    ctx: SandboxContext,
    processor: AuthorizationProcessor,
    control: SandboxControl,
    demo: () => DemoSeed | undefined,
  ) {
    this.#ctx = ctx;
    this.#pipeline = new ServicePipeline(ctx);
    const service = (route: ServiceRoute): RouteTarget => ({ kind: "service", route });
    this.#router
      .add("POST", DEFAULT_PATHS.token, { kind: "token" })
      .add("POST", DEFAULT_PATHS.authorizations, service(createAuthorizationRoute(ctx, processor)))
      .add("GET", DEFAULT_PATHS.order, service(getOrderRoute(ctx)))
      .add("POST", DEFAULT_PATHS.captureOrder, service(captureOrderRoute(ctx, processor)))
      .add("POST", DEFAULT_PATHS.cancelOrder, service(cancelOrderRoute(ctx, processor)))
      .add("POST", DEFAULT_PATHS.refundOrder, service(refundOrderRoute(ctx, processor)))
      .add("GET", DEFAULT_PATHS.customerToken, service(getCustomerTokenRoute(ctx)))
      .add("DELETE", DEFAULT_PATHS.customerToken, service(cancelCustomerTokenRoute(ctx)));
    for (const route of controlRoutes(control, demo)) {
      this.#router.add(route.method, route.path, { kind: "control", handle: (call) => route.handle(call) });
    }
  }

  /**
   * Answers one request. Never throws and never rejects: a bug becomes a 500 envelope (and a line on
   * stderr). Service requests are answered synchronously unless a latency fault makes them wait, so
   * the transport writes the answer without a promise per request.
   */
  serve(request: SandboxRequest): SandboxOutcome | Promise<SandboxOutcome> {
    let outcome: SandboxOutcome | Promise<SandboxOutcome>;
    try {
      outcome = this.#route(request);
    } catch (error) {
      return failed(request, error);
    }
    return outcome instanceof Promise ? outcome.catch((error: unknown) => failed(request, error)) : outcome;
  }

  /** Aborts latency waits. */
  close(): void {
    this.#pipeline.close();
  }

  #route(request: SandboxRequest): SandboxOutcome | Promise<SandboxOutcome> {
    const { path, query } = splitTarget(request.url);
    const match = this.#router.match(request.method, path);
    if (match.kind === "not_found") return respond(errorResponse(404));
    if (match.kind === "method_not_allowed") {
      return respond(errorResponse(405, [], { allow: match.allow.join(", ") }));
    }
    const target = match.route;
    if (target.kind === "control") {
      return this.#serveControl(target.handle, request, new URLSearchParams(query), match.params).then(
        respond,
      );
    }
    this.#ctx.stats.requests++;
    if (target.kind === "token") return this.#pipeline.serveTokenEndpoint(request, path);
    const resource = resourceOf(match.template, match.params);
    return this.#pipeline.serveService(target.route, request, path, match.params, resource);
  }

  async #serveControl(
    handle: (call: ControlCall) => ApiResponse | Promise<ApiResponse>,
    request: SandboxRequest,
    query: URLSearchParams,
    params: Readonly<Record<string, string>>,
  ): Promise<ApiResponse> {
    const parsed = parseJsonBody(request, null);
    if (!parsed.ok) return errorResponse(400, [{ reason: "INVALID_REQUEST", message: parsed.message }]);
    try {
      return await handle({ body: parsed.value ?? undefined, query, params });
    } catch (error) {
      if (!(error instanceof SandboxControlError)) throw error;
      const reason = { 400: "INVALID_REQUEST", 404: "NOT_FOUND", 409: "CONFLICT" }[error.status];
      const field = error.field === undefined ? {} : { field: error.field };
      return errorResponse(error.status, [{ reason, message: error.message, ...field }]);
    }
  }
}

function respond(response: ApiResponse): SandboxOutcome {
  return { kind: "respond", ...response };
}

function failed(request: SandboxRequest, error: unknown): SandboxOutcome {
  reportError(`${request.method} ${request.url} failed`, error);
  return respond(errorResponse(500));
}

/**
 * Path and query (without "?") of a request target; anything that is not origin-form gets a path that
 * matches nothing. The query is parsed only by the control routes, the only ones that read it.
 */
function splitTarget(url: string): { path: string; query: string } {
  const queryStart = url.indexOf("?");
  const path = queryStart < 0 ? url : url.slice(0, queryStart);
  const query = queryStart < 0 ? "" : url.slice(queryStart + 1);
  return { path: path.startsWith("/") ? path : "", query };
}

export function reportError(what: string, error: unknown): void {
  console.error(`[purchase-auth-sandbox] ${what}:`, error);
}
