import type {
  CreateCustomerTokenInput,
  CustomerTokenView,
  MerchantCredentials,
  SandboxControl,
  WebhookConfig,
} from "./control/types.js";

/**
 * Fixed identifiers of the demo data, so a demo storefront can be configured once. The secret is
 * public: the demo is for local use only.
 */
export const DEMO = {
  merchantId: "de300000-0000-4000-8000-000000000000",
  name: "Demo Shop",
  storeId: "demo-store",
  clientId: "de300000-0000-4000-8000-00000000c1d0",
  clientSecret: "demo-secret-for-local-use-only",
  /** Signs the demo merchant's webhooks when its receivers are given without a secret. */
  webhookSecret: "whsec-local-demo",
  tokens: {
    /** Active, unlimited funds, auto capture. */
    active: "de300000-0000-4000-8000-000000000001",
    /** Pending review: authorizations get 422 TOKEN_PENDING. */
    pendingReview: "de300000-0000-4000-8000-000000000002",
    /** Revoked: 422 TOKEN_REVOKED. */
    revoked: "de300000-0000-4000-8000-000000000003",
    /** Active with 0.00 funds: attempts fail with PAYMENT_METHOD_NO_FUNDS. */
    noFunds: "de300000-0000-4000-8000-000000000004",
    /** Needs a challenge: preferSynchronous is answered 202 and attempted asynchronously. */
    needsChallenge: "de300000-0000-4000-8000-000000000005",
  },
} as const;

export type DemoTokenName = keyof typeof DEMO.tokens;

export interface DemoSeed {
  merchant: MerchantCredentials;
  tokens: Record<DemoTokenName, CustomerTokenView>;
  /** Its webhook receivers, when `demoWebhooks` gave some. */
  webhooks?: WebhookConfig;
}

/**
 * Creates the demo merchant (currency EUR), one customer token per interesting state, and registers
 * `webhooks` for it when there are any.
 */
export function seedDemo(
  control: SandboxControl,
  webhooks: { urls: readonly string[]; secrets?: readonly string[] } = { urls: [] },
): DemoSeed {
  const merchant = control.createMerchant({
    merchantId: DEMO.merchantId,
    name: DEMO.name,
    storeId: DEMO.storeId,
    clientId: DEMO.clientId,
    clientSecret: DEMO.clientSecret,
  });
  const create = (customerToken: string, extra: Omit<CreateCustomerTokenInput, "merchantId">) =>
    control.createCustomerToken({
      merchantId: merchant.merchantId,
      customerToken,
      currency: "EUR",
      ...extra,
    });
  const tokens = {
    active: create(DEMO.tokens.active, {}),
    pendingReview: create(DEMO.tokens.pendingReview, { status: "Pending" }),
    revoked: create(DEMO.tokens.revoked, { status: "Revoked" }),
    noFunds: create(DEMO.tokens.noFunds, { funds: "0.00" }),
    needsChallenge: create(DEMO.tokens.needsChallenge, { needsChallenge: true }),
  };
  // Registered after the tokens exist, so seeding sends nothing.
  const registered =
    webhooks.urls.length === 0
      ? undefined
      : control.setWebhooks({
          merchantId: merchant.merchantId,
          urls: [...webhooks.urls],
          secrets: [...(webhooks.secrets ?? [DEMO.webhookSecret])],
        });
  return { merchant, tokens, ...(registered === undefined ? {} : { webhooks: registered }) };
}
