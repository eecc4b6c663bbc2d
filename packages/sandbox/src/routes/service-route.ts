import type { RouteParams } from "../http/router.js";
import type { ApiResponse } from "../http/types.js";
import type { AccessToken } from "../state/access-tokens.js";

/** A bearer-authenticated request that passed the checks of the pipeline (see http/pipeline.ts). */
export interface ServiceCall {
  readonly principal: AccessToken;
  readonly params: RouteParams;
  /** The parsed JSON body; undefined for routes without a body. */
  readonly body: unknown;
  readonly idempotencyKey: string | undefined;
}

export interface ServiceRoute {
  /** none: no body read; json: application/json required; optional_json: an empty body reads as `{}`. */
  readonly body: "none" | "json" | "optional_json";
  /**
   * For a large `json` body: the arrays the route's schema walks element by element (path from the
   * root, e.g. ".order.items" → issues of one element), so the body is read by `parseBoundedJson`.
   */
  readonly walkedArrays?: ReadonlyMap<string, (value: unknown) => number>;
  /** Accepts Service-Idempotency-Key (the create call and the order writes). */
  readonly idempotent: boolean;
  /**
   * `now`: the virtual time read once for the route's work (a request runs within one reading, as
   * it would within one millisecond), so the route need not read the clock again.
   */
  handle(call: ServiceCall, now: number): ApiResponse;
}
