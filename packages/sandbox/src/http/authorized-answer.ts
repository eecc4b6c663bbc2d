import { authorizedResponseWithId } from "./envelopes.js";
import type { ApiResponse } from "./types.js";

/**
 * The 200 of a synchronous create that succeeded, as its three ids: the pipeline sends `response()`,
 * and the idempotency store keeps the ids (the authorization's and the order's shared with their
 * records) instead of the ~130-byte body, which is written again only for a replay. At the bench's
 * store size that body was the largest object kept per create.
 */
export class AuthorizedAnswer {
  constructor(
    /** The response envelope's own id. */
    readonly id: string,
    readonly authorizationId: string,
    readonly orderId: string,
  ) {}

  /** The same response every time: `successResponse(200, { authorizationId, orderId })` with this id. */
  response(): ApiResponse {
    return authorizedResponseWithId(this.id, this.authorizationId, this.orderId);
  }
}
