import type { CaptureMode, CustomerTokenStatus } from "@purchase-auth/core";

/**
 * A customer token with the knobs tests turn: funds, a forced failure, a queue of failures for the
 * next attempts, an expired payment method, whether a challenge is needed.
 */
export interface CustomerTokenRecord {
  /** Lower-case GUID; lookups lower-case the given value. */
  readonly customerToken: string;
  readonly merchantId: string;
  status: CustomerTokenStatus;
  readonly currency: string;
  readonly storeId: string;
  readonly captureMode: CaptureMode;
  /** Available funds in cents; undefined = unlimited. A successful attempt reserves its total. */
  fundsCents: bigint | undefined;
  /** Extra customer verification needed: a preferSynchronous request then runs asynchronously. */
  needsChallenge: boolean;
  /** Every attempt fails with this reason while set. */
  failureReason: string | undefined;
  /** Reasons for the next attempts, one consumed per attempt (before `failureReason`). */
  failNextAttempts: string[];
  paymentMethodExpired: boolean;
}

/** The reason an authorization fails with while the token is in a status other than Active. */
export const TOKEN_STATUS_REASONS: Readonly<Record<CustomerTokenStatus, string | undefined>> = {
  Active: undefined,
  Pending: "TOKEN_PENDING",
  PendingActivation: "PENDING_ACTIVATION",
  Denied: "TOKEN_DENIED",
  Revoked: "TOKEN_REVOKED",
  Cancelled: "TOKEN_CANCELLED",
};

export class CustomerTokenStore {
  readonly #tokens = new Map<string, CustomerTokenRecord>();

  add(token: CustomerTokenRecord): CustomerTokenRecord {
    this.#tokens.set(token.customerToken, token);
    return token;
  }

  get(customerToken: string): CustomerTokenRecord | undefined {
    return this.#tokens.get(customerToken.toLowerCase());
  }

  /** The token only when `merchantId` owns it: another merchant's token is "not found". */
  owned(customerToken: string, merchantId: string): CustomerTokenRecord | undefined {
    const token = this.get(customerToken);
    return token?.merchantId === merchantId ? token : undefined;
  }

  list(): CustomerTokenRecord[] {
    return [...this.#tokens.values()];
  }

  clear(): void {
    this.#tokens.clear();
  }
}
