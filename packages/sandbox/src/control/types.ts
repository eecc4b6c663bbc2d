import type { CaptureMode, CustomerTokenStatus, Order } from "@purchase-auth/core";
import type { TokenRequestRecord } from "../context.js";
import type { FaultSpec, FaultView } from "../faults.js";
import type { AttemptRecord, AuthorizationStatus } from "../state/authorizations.js";
import type { OrderOperation } from "../state/orders.js";
import type { EmittedEvent, WebhookDeliveryRecord, WebhookDeliverySettings } from "../webhooks/dispatcher.js";

// The control surface of the sandbox (test-only). The same calls exist as methods of `Simulator` /
// `SandboxServer` and as HTTP routes under /sandbox (see README).

export interface CreateMerchantInput {
  name?: string;
  storeId?: string;
  /** Scope of the first API client; default the sandbox's `defaultScope`. */
  scope?: string;
  /** Fixed identifiers, for a demo with known credentials; generated when omitted. */
  merchantId?: string;
  clientId?: string;
  clientSecret?: string;
}

/** A new merchant and its first API client. */
export interface MerchantCredentials {
  merchantId: string;
  name: string;
  storeId: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

export interface CreateApiClientInput {
  merchantId: string;
  scope?: string;
  clientId?: string;
  clientSecret?: string;
}

export interface ApiClientCredentials {
  merchantId: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

/** The knobs of a customer token that decide how attempts go. */
export interface CustomerTokenBehaviour {
  /** Available funds as a decimal ("100.00"); null or omitted = unlimited. */
  funds?: string | number | null;
  /** A preferSynchronous request is then answered 202 and attempted asynchronously. */
  needsChallenge?: boolean;
  /** Every attempt fails with this reason while set; null clears it. */
  failureReason?: string | null;
  /** Reasons for the next attempts, one consumed per attempt (e.g. ["PAYMENT_FAILED"]). Replaces the queue. */
  failNextAttempts?: string[];
  paymentMethodExpired?: boolean;
}

export interface CreateCustomerTokenInput extends CustomerTokenBehaviour {
  merchantId: string;
  /** A GUID; generated when omitted. */
  customerToken?: string;
  /** Default Active. */
  status?: CustomerTokenStatus;
  /** Default EUR. */
  currency?: string;
  /** Default the merchant's store. */
  storeId?: string;
  /** Default Auto. */
  captureMode?: CaptureMode;
}

export interface UpdateCustomerTokenInput extends CustomerTokenBehaviour {
  /** Changing it emits customer-token.status-changed. */
  status?: CustomerTokenStatus;
}

export interface CustomerTokenView {
  customerToken: string;
  merchantId: string;
  status: CustomerTokenStatus;
  currency: string;
  storeId: string;
  captureMode: CaptureMode;
  /** Remaining funds; null = unlimited. */
  funds: string | null;
  needsChallenge: boolean;
  failureReason: string | null;
  failNextAttempts: string[];
  paymentMethodExpired: boolean;
}

export interface WebhookConfigInput {
  merchantId: string;
  /** Receivers; every event goes to each. An empty list stops deliveries. */
  urls: string[];
  /** Signing secrets (each signs every delivery, for rotation); one is generated when omitted. */
  secrets?: string[];
}

export interface WebhookConfig {
  merchantId: string;
  urls: string[];
  secrets: string[];
}

export interface AuthorizationView {
  authorizationId: string;
  merchantId: string;
  clientId: string;
  customerToken: string;
  storeId: string;
  status: AuthorizationStatus;
  amount: string;
  currency: string;
  captureMode: CaptureMode;
  reference?: string;
  actionReference?: string;
  settlementReference?: string;
  idempotencyKey?: string;
  schedule: "asap" | "relative" | "absolute" | "synchronous";
  maxAttempts: number;
  attempts: AttemptRecord[];
  nextAttemptAt?: string;
  orderId?: string;
  failureReason?: string;
  createdAt: string;
}

export interface AuthorizationFilter {
  merchantId?: string;
  customerToken?: string;
  status?: AuthorizationStatus;
}

/** The Order resource plus what only the sandbox knows. */
export interface OrderView extends Order {
  merchantId: string;
  operations: OrderOperation[];
}

export interface OrderFilter {
  merchantId?: string;
  authorizationId?: string;
}

export interface RevokeAccessTokensInput {
  /** Only this client's tokens; all tokens when omitted. */
  clientId?: string;
}

export interface SandboxStatsView {
  requests: number;
  tokenRequests: number;
  tokensIssued: number;
  authorizations: number;
  attempts: number;
  orders: number;
  webhookEvents: number;
  webhookPosts: number;
  scheduledJobs: number;
  idempotencyKeys: number;
}

/** Everything a test can do to the sandbox. */
export interface SandboxControl {
  createMerchant(input?: CreateMerchantInput): MerchantCredentials;
  createApiClient(input: CreateApiClientInput): ApiClientCredentials;
  createCustomerToken(input: CreateCustomerTokenInput): CustomerTokenView;
  getCustomerToken(customerToken: string): CustomerTokenView;
  updateCustomerToken(customerToken: string, input: UpdateCustomerTokenInput): CustomerTokenView;
  setCustomerTokenStatus(customerToken: string, status: CustomerTokenStatus): CustomerTokenView;
  setWebhooks(input: WebhookConfigInput): WebhookConfig;
  setWebhookDelivery(settings: Partial<WebhookDeliverySettings>): WebhookDeliverySettings;
  /** Moves virtual time forward and runs every job that falls due, in due order. Returns the new now. */
  advanceClock(ms: number): number;
  /** Virtual epoch milliseconds. */
  now(): number;
  injectFault(spec: FaultSpec): string;
  clearFaults(): void;
  faults(): FaultView[];
  /** Returns how many tokens were revoked. */
  revokeAccessTokens(input?: RevokeAccessTokensInput): number;
  authorizations(filter?: AuthorizationFilter): AuthorizationView[];
  attempts(): AttemptRecord[];
  orders(filter?: OrderFilter): OrderView[];
  events(): EmittedEvent[];
  webhookDeliveries(): WebhookDeliveryRecord[];
  tokenRequests(): TokenRequestRecord[];
  stats(): SandboxStatsView;
  /** Resolves when no job is due and no webhook delivery is queued or in flight. */
  settle(): Promise<void>;
  /** Forgets all state, faults and clock moves (and re-seeds the demo data when started with it). */
  reset(): void;
}
