import { DEMO, type DemoTokenName } from "@purchase-auth/sandbox";

// The demo customers. In a real shop this is your customer table: the customer token was stored
// there at the customer's first checkout, and it never leaves the server. The browser proves who
// it is with its session; the token charged is looked up here (see payments.ts, resolveCustomer).

export type TokenStateTone = "ok" | "warn" | "bad";

export interface DemoCustomer {
  id: string;
  name: string;
  company: string;
  email: string;
  /** The stored customer token: one of the sandbox's demo tokens. */
  customerToken: string;
  /** What the token is like, shown in the sign-in picker so a developer knows what will happen. */
  tokenState: {
    name: DemoTokenName;
    label: string;
    tone: TokenStateTone;
    /** What an authorization with this token gets. */
    outcome: string;
  };
}

export const DEMO_CUSTOMERS: readonly DemoCustomer[] = [
  {
    id: "alice",
    name: "Alice Martin",
    company: "Martin & Co. Architects",
    email: "alice@martin-architects.example",
    customerToken: DEMO.tokens.active,
    tokenState: {
      name: "active",
      label: "Active",
      tone: "ok",
      outcome: "Payments go through.",
    },
  },
  {
    id: "ben",
    name: "Ben Okafor",
    company: "Okafor Logistics",
    email: "ben@okafor-logistics.example",
    customerToken: DEMO.tokens.pendingReview,
    tokenState: {
      name: "pendingReview",
      label: "Pending review",
      tone: "warn",
      outcome: "Declined until his organisation approves the payment method (TOKEN_PENDING).",
    },
  },
  {
    id: "chloe",
    name: "Chloé Dubois",
    company: "Atelier Dubois",
    email: "chloe@atelier-dubois.example",
    customerToken: DEMO.tokens.revoked,
    tokenState: {
      name: "revoked",
      label: "Revoked",
      tone: "bad",
      outcome: "Declined: the payment method was revoked (TOKEN_REVOKED).",
    },
  },
  {
    id: "dev",
    name: "Dev Patel",
    company: "Patel Dental Clinic",
    email: "dev@patel-dental.example",
    customerToken: DEMO.tokens.noFunds,
    tokenState: {
      name: "noFunds",
      label: "No funds",
      tone: "bad",
      outcome: "Declined for insufficient funds (PAYMENT_METHOD_NO_FUNDS).",
    },
  },
  {
    id: "emma",
    name: "Emma Schulz",
    company: "Schulz Bakery",
    email: "emma@schulz-bakery.example",
    customerToken: DEMO.tokens.needsChallenge,
    tokenState: {
      name: "needsChallenge",
      label: "Needs a challenge",
      tone: "warn",
      outcome:
        "A challenge is needed: even “Now” is confirmed a moment later, by webhook; the order page updates live.",
    },
  },
];

const BY_ID = new Map(DEMO_CUSTOMERS.map((customer) => [customer.id, customer]));

export function findCustomer(id: string | undefined): DemoCustomer | undefined {
  return id === undefined ? undefined : BY_ID.get(id);
}

/** "•••• 0001": enough for the customer to recognise the method, never the token itself. */
export function maskedToken(customerToken: string): string {
  return `•••• ${customerToken.slice(-4)}`;
}
