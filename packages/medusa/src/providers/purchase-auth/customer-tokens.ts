import { MedusaError } from "@medusajs/framework/utils";
import { type CustomerToken, NotFoundError } from "@purchase-auth/core";
import { describeReason } from "./errors";
import { fail, type ProviderContext } from "./provider-context";
import { declineReasonOfTokenStatus } from "./status-mapping";
import type { StoredCustomerToken } from "./stored-tokens";

/** Token statuses that can never become chargeable again: such a token is not stored. */
export const FINAL_TOKEN_STATUSES: ReadonlySet<string> = new Set(["Denied", "Revoked", "Cancelled"]);

/** The token as the service sees it; an unknown token is a 404 naming why. */
export async function readCustomerToken(
  context: ProviderContext,
  customerToken: string,
): Promise<CustomerToken> {
  try {
    return await context.client.customerTokens.get(customerToken);
  } catch (error) {
    if (NotFoundError.isInstance(error)) {
      throw new MedusaError(
        MedusaError.Types.NOT_FOUND,
        "The service does not know this customer token for this merchant account (unknown token, or another merchant's or environment's).",
      );
    }
    throw fail(context, "Checking the customer token", error, {});
  }
}

/** Refuses a token that cannot pay now (not Active, or another currency), naming the reason. */
export async function checkChargeable(
  context: ProviderContext,
  customerToken: string,
  currency: string,
): Promise<void> {
  const token = await readCustomerToken(context, customerToken);
  const reason = declineReasonOfTokenStatus(token.status);
  if (reason) {
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      `The stored customer token cannot be charged (${describeReason(reason)})`,
    );
  }
  if (token.currency !== currency) {
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      `The stored customer token pays in ${token.currency}, not ${currency} (${describeReason("INVALID_CURRENCY")})`,
    );
  }
}

/**
 * A token about to be stored: it must exist for this merchant (else NOT_FOUND → 404) and not be in
 * a final state (Denied, Revoked, Cancelled → NOT_ALLOWED → 400, naming the status).
 */
export async function tokenToStore(
  context: ProviderContext,
  customerToken: string,
): Promise<StoredCustomerToken> {
  const token = await readCustomerToken(context, customerToken);
  if (FINAL_TOKEN_STATUSES.has(token.status)) {
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      `The customer token cannot be stored: it is ${token.status} (${describeReason(declineReasonOfTokenStatus(token.status))}).`,
    );
  }
  return {
    customer_token: token.customerToken.toLowerCase(),
    currency: token.currency,
    added_at: new Date().toISOString(),
    status: token.status,
  };
}

/** Cancels a token at the service: it can never be charged again. Unknown there counts as done. */
export async function cancelCustomerToken(context: ProviderContext, customerToken: string): Promise<void> {
  try {
    await context.client.customerTokens.cancel(customerToken);
  } catch (error) {
    if (!NotFoundError.isInstance(error)) throw fail(context, "Cancelling the customer token", error, {});
  }
}
