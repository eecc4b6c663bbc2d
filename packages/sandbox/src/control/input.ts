import {
  type CaptureMode,
  CURRENCY_CODES,
  type CustomerTokenStatus,
  customerTokenStatusSchema,
  decimalStringOf,
  isGuid,
  toCents,
} from "@purchase-auth/core";
import { FAULT_KINDS, type FaultSpec } from "../faults.js";
import type { WebhookDeliverySettings } from "../webhooks/dispatcher.js";
import { SandboxControlError } from "./errors.js";
import type {
  AuthorizationFilter,
  CreateApiClientInput,
  CreateCustomerTokenInput,
  CreateMerchantInput,
  OrderFilter,
  RevokeAccessTokensInput,
  WebhookConfigInput,
} from "./types.js";

// Control inputs arrive as JSON over HTTP or as objects from (possibly untyped) test code; both go
// through these readers, so a typo gives a 400 that names the field instead of odd behaviour later.

type Fields = Record<string, unknown>;

const TOKEN_STATUSES = customerTokenStatusSchema.options;
const CAPTURE_MODES: readonly CaptureMode[] = ["Auto", "Manual"];
const AUTHORIZATION_STATUSES = ["Scheduled", "Succeeded", "Failed"] as const;

function invalid(message: string): never {
  throw new SandboxControlError(400, message);
}

/** The input as an object; with `known`, a field outside it is an error (most likely a typo). */
function fields(value: unknown, known?: readonly string[]): Fields {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) invalid("the input must be an object");
  const unknown = known && Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined) invalid(`unknown field ${unknown} (known: ${known?.join(", ")})`);
  return value as Fields;
}

const BEHAVIOUR_FIELDS = [
  "funds",
  "needsChallenge",
  "failureReason",
  "failNextAttempts",
  "paymentMethodExpired",
];

function optionalString(input: Fields, key: string): string | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") invalid(`${key} must be a non-empty string`);
  return value;
}

function requiredString(input: Fields, key: string): string {
  return optionalString(input, key) ?? invalid(`${key} is required`);
}

function optionalGuid(input: Fields, key: string): string | undefined {
  const value = optionalString(input, key);
  if (value !== undefined && !isGuid(value)) invalid(`${key} must be a GUID`);
  return value?.toLowerCase();
}

function optionalBoolean(input: Fields, key: string): boolean | undefined {
  const value = input[key];
  if (value !== undefined && typeof value !== "boolean") invalid(`${key} must be true or false`);
  return value;
}

function optionalOneOf<T extends string>(input: Fields, key: string, values: readonly T[]): T | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !(values as readonly string[]).includes(value)) {
    invalid(`${key} must be one of ${values.join(", ")}`);
  }
  return value as T;
}

function stringList(input: Fields, key: string): string[] | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item.trim() === "")) {
    invalid(`${key} must be a list of non-empty strings`);
  }
  return [...(value as string[])];
}

export function readCreateMerchant(value: unknown): CreateMerchantInput {
  const input = fields(value, ["name", "storeId", "scope", "merchantId", "clientId", "clientSecret"]);
  return {
    name: optionalString(input, "name"),
    storeId: optionalString(input, "storeId"),
    scope: optionalString(input, "scope"),
    merchantId: optionalString(input, "merchantId"),
    clientId: optionalString(input, "clientId"),
    clientSecret: optionalString(input, "clientSecret"),
  };
}

export function readCreateApiClient(value: unknown): CreateApiClientInput {
  const input = fields(value, ["merchantId", "scope", "clientId", "clientSecret"]);
  return {
    merchantId: requiredString(input, "merchantId"),
    scope: optionalString(input, "scope"),
    clientId: optionalString(input, "clientId"),
    clientSecret: optionalString(input, "clientSecret"),
  };
}

/** Behaviour fields, with `funds` already in cents (null = unlimited, undefined = unchanged). */
export interface BehaviourChange {
  fundsCents: bigint | null | undefined;
  needsChallenge: boolean | undefined;
  failureReason: string | null | undefined;
  failNextAttempts: string[] | undefined;
  paymentMethodExpired: boolean | undefined;
}

function readBehaviour(input: Fields): BehaviourChange {
  const failureReason = input.failureReason === null ? null : optionalString(input, "failureReason");
  return {
    fundsCents: readFunds(input.funds),
    needsChallenge: optionalBoolean(input, "needsChallenge"),
    failureReason,
    failNextAttempts: stringList(input, "failNextAttempts"),
    paymentMethodExpired: optionalBoolean(input, "paymentMethodExpired"),
  };
}

function readFunds(value: unknown): bigint | null | undefined {
  if (value === undefined || value === null) return value;
  const text = decimalStringOf(value);
  let cents: bigint | undefined;
  try {
    cents = text === undefined ? undefined : toCents(text);
  } catch {
    cents = undefined;
  }
  if (cents === undefined || cents < 0n)
    invalid("funds must be a decimal amount of at least 0 with at most 2 decimals");
  return cents;
}

export function readCreateCustomerToken(
  value: unknown,
): CreateCustomerTokenInput & { behaviour: BehaviourChange } {
  const input = fields(value, [
    "merchantId",
    "customerToken",
    "status",
    "currency",
    "storeId",
    "captureMode",
    ...BEHAVIOUR_FIELDS,
  ]);
  const currency = optionalString(input, "currency");
  if (currency !== undefined && !CURRENCY_CODES.has(currency)) invalid("currency must be an ISO 4217 code");
  return {
    merchantId: requiredString(input, "merchantId"),
    customerToken: optionalGuid(input, "customerToken"),
    status: optionalOneOf<CustomerTokenStatus>(input, "status", TOKEN_STATUSES),
    currency,
    storeId: optionalString(input, "storeId"),
    captureMode: optionalOneOf(input, "captureMode", CAPTURE_MODES),
    behaviour: readBehaviour(input),
  };
}

export function readUpdateCustomerToken(value: unknown): {
  status: CustomerTokenStatus | undefined;
  behaviour: BehaviourChange;
} {
  const input = fields(value, ["status", ...BEHAVIOUR_FIELDS]);
  return {
    status: optionalOneOf<CustomerTokenStatus>(input, "status", TOKEN_STATUSES),
    behaviour: readBehaviour(input),
  };
}

export function readTokenStatus(value: unknown): CustomerTokenStatus {
  return (
    optionalOneOf<CustomerTokenStatus>({ status: value }, "status", TOKEN_STATUSES) ??
    invalid("status is required")
  );
}

export function readWebhookConfig(value: unknown): WebhookConfigInput {
  const input = fields(value, ["merchantId", "urls", "secrets"]);
  const urls = stringList(input, "urls") ?? invalid("urls is required (an empty list stops deliveries)");
  for (const url of urls) {
    let protocol: string | undefined;
    try {
      protocol = new URL(url).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== "http:" && protocol !== "https:") invalid(`${url} is not an http(s) URL`);
  }
  const secrets = stringList(input, "secrets");
  if (secrets !== undefined && secrets.length === 0) invalid("secrets must not be empty when given");
  return { merchantId: requiredString(input, "merchantId"), urls, secrets };
}

export function readWebhookDelivery(value: unknown): Partial<WebhookDeliverySettings> {
  const input = fields(value, ["duplicate", "outOfOrder"]);
  const duplicate = optionalBoolean(input, "duplicate");
  const outOfOrder = optionalBoolean(input, "outOfOrder");
  return {
    ...(duplicate === undefined ? {} : { duplicate }),
    ...(outOfOrder === undefined ? {} : { outOfOrder }),
  };
}

export function readAdvance(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    invalid("ms must be a number of milliseconds of at least 0");
  }
  return value;
}

export function readFaultSpec(value: unknown): FaultSpec {
  const input = fields(value, ["kind", "match", "count", "probability", "latencyMs"]);
  const kind =
    optionalOneOf(input, "kind", FAULT_KINDS) ?? invalid(`kind is required (${FAULT_KINDS.join(", ")})`);
  const match = fields(input.match, ["method", "path"]);
  const count = input.count;
  if (count !== undefined && count !== null && count !== Number.POSITIVE_INFINITY) {
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1) {
      invalid("count must be a whole number of at least 1, or null for unlimited");
    }
  }
  const probability = input.probability;
  if (
    probability !== undefined &&
    (typeof probability !== "number" || !(probability >= 0 && probability <= 1))
  ) {
    invalid("probability must be a number from 0 to 1");
  }
  const latencyMs = input.latencyMs;
  if (
    latencyMs !== undefined &&
    (typeof latencyMs !== "number" || !Number.isFinite(latencyMs) || latencyMs < 0)
  ) {
    invalid("latencyMs must be a number of milliseconds of at least 0");
  }
  const method = optionalString(match, "method");
  const path = optionalString(match, "path");
  return {
    kind,
    match: { ...(method === undefined ? {} : { method }), ...(path === undefined ? {} : { path }) },
    ...(count === undefined ? {} : { count: count as number | null }),
    ...(probability === undefined ? {} : { probability: probability as number }),
    ...(latencyMs === undefined ? {} : { latencyMs: latencyMs as number }),
  };
}

export function readRevoke(value: unknown): RevokeAccessTokensInput {
  const clientId = optionalString(fields(value, ["clientId"]), "clientId");
  return clientId === undefined ? {} : { clientId };
}

export function readAuthorizationFilter(
  query: URLSearchParams | AuthorizationFilter | undefined,
): AuthorizationFilter {
  const input = fromQuery(query);
  const status = optionalOneOf(input, "status", AUTHORIZATION_STATUSES);
  const merchantId = optionalString(input, "merchantId");
  const customerToken = optionalString(input, "customerToken");
  return {
    ...(status === undefined ? {} : { status }),
    ...(merchantId === undefined ? {} : { merchantId }),
    ...(customerToken === undefined ? {} : { customerToken: customerToken.toLowerCase() }),
  };
}

export function readOrderFilter(query: URLSearchParams | OrderFilter | undefined): OrderFilter {
  const input = fromQuery(query);
  const merchantId = optionalString(input, "merchantId");
  const authorizationId = optionalString(input, "authorizationId");
  return {
    ...(merchantId === undefined ? {} : { merchantId }),
    ...(authorizationId === undefined ? {} : { authorizationId }),
  };
}

function fromQuery(query: URLSearchParams | object | undefined): Fields {
  if (query instanceof URLSearchParams) return Object.fromEntries(query);
  return fields(query);
}
