import { MedusaError } from "@medusajs/framework/utils";
import { isGuid } from "@purchase-auth/core";

// A logged-in customer's customer tokens live in the data of the customer's account holder for this
// provider (Medusa's payment module keeps it, linked to the customer). Medusa passes that account
// holder to initiatePayment for the logged-in customer only, so a customer can only ever charge
// the tokens stored for them: a token the storefront names that is not in the list is refused.

/** A customer token stored for a customer. */
export interface StoredCustomerToken {
  customer_token: string;
  /** ISO 4217, upper case: the token can only pay in this currency. */
  currency: string;
  /** When it was attached (ISO 8601). */
  added_at: string;
  /**
   * The service's status as last learned (at attach, or read from the service when a
   * customer-token.status-changed event arrives), or TOKEN_NOT_FOUND. Only an Active (or not yet
   * known) token is picked by default.
   */
  status?: string;
}

/** The stored status of a token the service answered 404 for (not this merchant's any more): never picked. */
export const TOKEN_NOT_FOUND = "NotFound";

/** The account holder's data this provider keeps. */
export interface AccountHolderData {
  customer_id: string | null;
  customer_tokens: StoredCustomerToken[];
}

function isStoredToken(value: unknown): value is StoredCustomerToken {
  if (typeof value !== "object" || value === null) return false;
  const { customer_token, currency, added_at } = value as Record<string, unknown>;
  return (
    typeof customer_token === "string" &&
    isGuid(customer_token) &&
    typeof currency === "string" &&
    typeof added_at === "string"
  );
}

/** Reads an account holder's data, keeping only well-formed entries. */
export function readAccountHolderData(data: Record<string, unknown> | null | undefined): AccountHolderData {
  const tokens = Array.isArray(data?.customer_tokens) ? data.customer_tokens.filter(isStoredToken) : [];
  return {
    customer_id: typeof data?.customer_id === "string" ? data.customer_id : null,
    customer_tokens: tokens.map(({ customer_token, currency, added_at, status }) => ({
      customer_token: customer_token.toLowerCase(),
      currency: currency.toUpperCase(),
      added_at,
      ...(typeof status === "string" ? { status } : {}),
    })),
  };
}

/** A token not flagged by the service (Active, or status not learned yet). */
export function isUsable(token: StoredCustomerToken): boolean {
  return token.status === undefined || token.status === "Active";
}

/** The list with `customerToken`'s status set (returns undefined when it is not in the list). */
export function withTokenStatus(
  data: AccountHolderData,
  customerToken: string,
  status: string,
): AccountHolderData | undefined {
  const token = customerToken.toLowerCase();
  if (!data.customer_tokens.some((entry) => entry.customer_token === token)) return undefined;
  return {
    ...data,
    customer_tokens: data.customer_tokens.map((entry) =>
      entry.customer_token === token ? { ...entry, status } : entry,
    ),
  };
}

/** The list with `token` added (replacing an entry for the same token). */
export function withToken(data: AccountHolderData, token: StoredCustomerToken): AccountHolderData {
  const normalized = { ...token, customer_token: token.customer_token.toLowerCase() };
  return {
    ...data,
    customer_tokens: [
      ...data.customer_tokens.filter((entry) => entry.customer_token !== normalized.customer_token),
      normalized,
    ],
  };
}

/** The list without `customerToken`. */
export function withoutToken(data: AccountHolderData, customerToken: string): AccountHolderData {
  const token = customerToken.toLowerCase();
  return { ...data, customer_tokens: data.customer_tokens.filter((entry) => entry.customer_token !== token) };
}

/** True when `customerToken` is stored in this account holder's data. */
export function holdsToken(data: AccountHolderData, customerToken: string): boolean {
  const token = customerToken.toLowerCase();
  return data.customer_tokens.some((entry) => entry.customer_token === token);
}

/**
 * The token to charge: the one the storefront asked for, if it is this customer's, else the
 * customer's most recently stored token in the cart's currency.
 */
export function chooseToken(
  data: AccountHolderData | undefined,
  requested: unknown,
  currency: string,
): StoredCustomerToken {
  if (data === undefined) {
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      "Paying with a stored customer token needs a logged-in customer: sign in to use it.",
    );
  }
  if (requested !== undefined && requested !== null) {
    const token =
      typeof requested === "string"
        ? data.customer_tokens.find((entry) => entry.customer_token === requested.toLowerCase())
        : undefined;
    if (!token) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        "The customer token given is not one of this customer's stored customer tokens.",
      );
    }
    if (!isUsable(token)) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `The customer token given is ${token.status} at the service and cannot be charged.`,
      );
    }
    return token;
  }
  const candidates = data.customer_tokens.filter(
    (entry) => entry.currency === currency.toUpperCase() && isUsable(entry),
  );
  const latest = candidates.at(-1);
  if (!latest) {
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      data.customer_tokens.length === 0
        ? "This customer has no stored customer token."
        : `This customer has no stored customer token for ${currency.toUpperCase()}.`,
    );
  }
  return latest;
}
