import {
  type CaptureMode,
  CURRENCY_CODES,
  type CustomerTokenStatus,
  customerTokenStatusSchema,
  decimalStringOf,
  errorReasonInfo,
  toCents,
  WEBHOOK_FAILURE_REASONS,
} from "@purchase-auth/core";
import {
  FAULT_KINDS,
  FAULT_PHASES,
  type FaultKind,
  type FaultSpec,
  GARBLED_BODIES,
  GATEWAY_STATUSES,
} from "../faults.js";
import type { WebhookDeliverySettings } from "../webhooks/dispatcher.js";
import {
  type Fields,
  fields,
  invalid,
  optionalBoolean,
  optionalGuid,
  optionalNumber,
  optionalOneOf,
  optionalString,
  requiredString,
  stringList,
} from "./fields.js";
import { LIMITS, MAX_VIRTUAL_TIME } from "./limits.js";
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
// through these readers, so a typo or an out-of-range value gives a 400 that names the field
// instead of odd behaviour (or a broken sandbox) later.

const TOKEN_STATUSES = customerTokenStatusSchema.options;
const CAPTURE_MODES: readonly CaptureMode[] = ["Auto", "Manual"];
const AUTHORIZATION_STATUSES = ["Scheduled", "Succeeded", "Failed"] as const;

const BEHAVIOUR_FIELDS = [
  "funds",
  "needsChallenge",
  "failureReason",
  "failNextAttempts",
  "paymentMethodExpired",
];

export function readCreateMerchant(value: unknown): CreateMerchantInput {
  const input = fields(value, ["name", "storeId", "scope", "merchantId", "clientId", "clientSecret"]);
  return {
    name: optionalString(input, "name"),
    storeId: optionalString(input, "storeId"),
    scope: optionalString(input, "scope"),
    merchantId: optionalString(input, "merchantId"),
    clientId: optionalString(input, "clientId"),
    clientSecret: optionalString(input, "clientSecret", LIMITS.secretLength),
  };
}

export function readCreateApiClient(value: unknown): CreateApiClientInput {
  const input = fields(value, ["merchantId", "scope", "clientId", "clientSecret"]);
  return {
    merchantId: requiredString(input, "merchantId"),
    scope: optionalString(input, "scope"),
    clientId: optionalString(input, "clientId"),
    clientSecret: optionalString(input, "clientSecret", LIMITS.secretLength),
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
  const failureReason =
    input.failureReason === null ? null : optionalString(input, "failureReason", LIMITS.reasonLength);
  attemptReason(failureReason, "failureReason");
  const failNextAttempts = stringList(input, "failNextAttempts", {
    maxItems: LIMITS.failNextAttempts,
    maxLength: LIMITS.reasonLength,
  });
  for (const [index, reason] of (failNextAttempts ?? []).entries()) {
    attemptReason(reason, `failNextAttempts[${index}]`);
  }
  return {
    fundsCents: readFunds(input.funds),
    needsChallenge: optionalBoolean(input, "needsChallenge"),
    failureReason,
    failNextAttempts,
    paymentMethodExpired: optionalBoolean(input, "paymentMethodExpired"),
  };
}

/**
 * An attempt's failure may reach the merchant by webhook, which carries only the reasons section
 * 7.2 marks "Can be in webhook": a known reason that cannot (INVALID_CURRENCY, the idempotency and
 * order reasons) is refused. A reason the table does not know stays allowed: it stands for one a
 * newer service may add, which clients must survive.
 */
function attemptReason(reason: string | null | undefined, field: string): void {
  if (!reason || !errorReasonInfo(reason) || errorReasonInfo(reason)?.canBeInWebhook) return;
  invalid(
    field,
    `${field} must be a reason an attempt can fail with (section 7.2, "Can be in webhook": ${WEBHOOK_FAILURE_REASONS.join(", ")}) or one the service does not define yet; ${reason} is not`,
  );
}

function readFunds(value: unknown): bigint | null | undefined {
  if (value === undefined || value === null) return value;
  const text = decimalStringOf(value);
  let cents: bigint | undefined;
  try {
    cents = text === undefined || text.length > LIMITS.amountLength ? undefined : toCents(text);
  } catch {
    cents = undefined;
  }
  if (cents === undefined || cents < 0n || cents > LIMITS.maxFundsCents) {
    invalid(
      "funds",
      "funds must be a decimal amount from 0 to 9999999999999.99 with at most 2 decimals, or null",
    );
  }
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
  if (currency !== undefined && !CURRENCY_CODES.has(currency)) {
    invalid("currency", "currency must be an ISO 4217 code");
  }
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
    invalid("status", "status is required")
  );
}

export function readWebhookConfig(value: unknown): WebhookConfigInput {
  const input = fields(value, ["merchantId", "urls", "secrets"]);
  const urls =
    stringList(input, "urls", { maxItems: LIMITS.webhookUrls, maxLength: LIMITS.urlLength }) ??
    invalid("urls", "urls is required (an empty list stops deliveries)");
  urls.forEach((url, index) => {
    if (!isHttpUrl(url)) invalid(`urls[${index}]`, `urls[${index}] is not an http(s) URL`);
  });
  const secrets = stringList(input, "secrets", {
    maxItems: LIMITS.webhookSecrets,
    maxLength: LIMITS.secretLength,
  });
  if (secrets !== undefined && secrets.length === 0)
    invalid("secrets", "secrets must not be empty when given");
  return { merchantId: requiredString(input, "merchantId"), urls, secrets };
}

export function isHttpUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
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

/**
 * A clock move in milliseconds. `now` is the current virtual time: the clock may not pass
 * MAX_VIRTUAL_TIME (a move beyond it used to break every later call that prints a time).
 */
export function readAdvance(value: unknown, now: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    invalid("ms", "ms must be a number of milliseconds of at least 0");
  }
  const max = Math.max(0, MAX_VIRTUAL_TIME - now);
  if (value > max) {
    invalid(
      "ms",
      `ms must be at most ${max}: the virtual clock cannot pass ${new Date(MAX_VIRTUAL_TIME).toISOString()}`,
    );
  }
  return value;
}

/** Fields that only some kinds take, and which kinds require them. */
const KIND_FIELDS: Record<string, { kinds: readonly FaultKind[]; requiredBy: readonly FaultKind[] }> = {
  latencyMs: { kinds: ["latency", "delay_after_commit"], requiredBy: ["delay_after_commit"] },
  status: { kinds: ["gateway_error"], requiredBy: ["gateway_error"] },
  phase: { kinds: ["gateway_error"], requiredBy: ["gateway_error"] },
  retryAfterSeconds: { kinds: ["rate_limited"], requiredBy: [] },
  body: { kinds: ["garbled_success"], requiredBy: ["garbled_success"] },
};

export function readFaultSpec(value: unknown): FaultSpec {
  const input = fields(value, ["kind", "match", "count", "probability", ...Object.keys(KIND_FIELDS)]);
  const kind =
    optionalOneOf(input, "kind", FAULT_KINDS) ??
    invalid("kind", `kind is required (${FAULT_KINDS.join(", ")})`);
  for (const [key, { kinds, requiredBy }] of Object.entries(KIND_FIELDS)) {
    if (input[key] !== undefined && !kinds.includes(kind)) {
      invalid(key, `${key} applies to ${kinds.join(", ")} only, not ${kind}`);
    }
    if (input[key] === undefined && requiredBy.includes(kind)) invalid(key, `${key} is required for ${kind}`);
  }
  const match = fields(input.match, ["method", "path"], "match");
  const method = optionalString(match, "method", LIMITS.faultMethodLength, "match.method");
  if (method !== undefined && !/^[A-Za-z]+$/.test(method)) {
    invalid("match.method", "match.method must be an HTTP method such as POST");
  }
  const path = optionalString(match, "path", LIMITS.faultPathLength, "match.path");
  const count =
    input.count === null || input.count === Number.POSITIVE_INFINITY
      ? null
      : optionalNumber(input, "count", { min: 1, max: LIMITS.faultCount, integer: true });
  if (count === undefined && input.count !== undefined) invalid("count", "count is invalid");
  const probability = optionalNumber(input, "probability", { min: 0, max: 1 });
  const latencyMs = optionalNumber(input, "latencyMs", { min: 0, max: LIMITS.latencyMs, unit: " of ms" });
  const retryAfterSeconds = optionalNumber(input, "retryAfterSeconds", {
    min: 0,
    max: LIMITS.retryAfterSeconds,
    integer: true,
    unit: " of seconds",
  });
  const status = optionalOneOf(input, "status", GATEWAY_STATUSES);
  const phase = optionalOneOf(input, "phase", FAULT_PHASES);
  const body = optionalOneOf(input, "body", GARBLED_BODIES);
  const given = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
  return {
    kind,
    match: { ...given("method", method), ...given("path", path) },
    ...(input.count === undefined ? {} : { count }),
    ...given("probability", probability),
    ...given("latencyMs", latencyMs),
    ...given("retryAfterSeconds", retryAfterSeconds),
    ...given("status", status),
    ...given("phase", phase),
    ...given("body", body),
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
