// Display helpers shared by the widgets. Amounts stay the decimal strings the service sends: they are
// shown as they are, never through a binary float.

/** The provider's readable name (Medusa's dashboard prints the raw `pp_purchase-auth_<id>`). */
export const PROVIDER_NAME = "Purchase Authorization Service";

/** `pp_purchase-auth_<id>` → "<id>", the part the merchant chose in medusa-config. */
export function providerInstance(providerId: string): string {
  const prefix = "pp_purchase-auth_";
  return providerId.startsWith(prefix) ? providerId.slice(prefix.length) : providerId;
}

/** A customer token shown with its last four characters only. */
export function maskToken(token: string): string {
  return `•••• ${token.slice(-4)}`;
}

/** "79.6" or "79.60" with "EUR" → "79.60 EUR"; null → "–". Exact: string arithmetic only. */
export function money(amount: string | null | undefined, currency: string | null | undefined): string {
  if (amount === null || amount === undefined || amount === "") return "–";
  const [whole = "0", fraction = ""] = amount.split(".");
  const cents = fraction.length >= 2 ? fraction : fraction.padEnd(2, "0");
  return `${whole}.${cents}${currency ? ` ${currency.toUpperCase()}` : ""}`;
}

export type BadgeColor = "green" | "red" | "blue" | "orange" | "grey" | "purple";

/** The colour of a customer token's status at the service. */
export function tokenStatusColor(status: string | null): BadgeColor {
  if (status === "Active") return "green";
  if (status === null) return "orange";
  if (status === "Revoked" || status === "Denied" || status === "Cancelled") return "red";
  return "blue";
}

/** The colour of a service order's status. */
export function orderStatusColor(status: string | null | undefined): BadgeColor {
  switch (status) {
    case "Activated":
      return "green";
    case "NotActivated":
    case "PartActivated":
      return "blue";
    case "PartReturned":
    case "Returned":
      return "purple";
    case "Cancelled":
    case "Expired":
      return "red";
    case undefined:
    case null:
      return "orange";
    default:
      return "grey";
  }
}

/** An ISO date as a short local date and time. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "–";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
