import { errorEnvelopeSchema } from "../schemas/envelopes.js";
import { errorReasonInfo } from "../schemas/error-reasons.js";
import {
  AuthenticationError,
  DeclinedError,
  type ErrorReasonEntry,
  IdempotencyError,
  InvalidRequestError,
  NotFoundError,
  OrderStateError,
  type PurchaseAuthError,
  type PurchaseAuthErrorDetails,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from "./errors.js";

/** The parts of an error envelope we use; absent when the body is not an envelope. */
export interface ParsedErrorBody {
  requestId?: string;
  reasons: ErrorReasonEntry[];
}

export function parseErrorBody(body: string): ParsedErrorBody {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { reasons: [] };
  }
  const parsed = errorEnvelopeSchema.safeParse(json);
  if (!parsed.success) return { reasons: [] };
  const reasons = parsed.data.error.errors.map((entry) => ({
    reason: entry.reason,
    message: entry.message,
    ...(typeof entry.field === "string" ? { field: entry.field } : {}),
    ...(typeof entry.rule === "string" ? { rule: entry.rule } : {}),
  }));
  return { requestId: parsed.data.id, reasons };
}

const IDEMPOTENCY_REASONS = new Set(["IDEMPOTENCY_RESPONSE_EXPIRED", "IDEMPOTENCY_KEY_PARSING"]);
const ORDER_REASONS = new Set(["INVALID_ORDER_STATE", "AMOUNT_EXCEEDS_REMAINING"]);

/**
 * The error for a non-2xx answer. Classified by reason first (the supplement: "classify by reason,
 * never by status alone"), then by status.
 */
export function errorFromResponse(
  status: number,
  body: ParsedErrorBody,
  context: { operation: string; idempotencyKey?: string },
): PurchaseAuthError {
  const details: PurchaseAuthErrorDetails = {
    status,
    reasons: body.reasons,
    ...(body.requestId === undefined ? {} : { requestId: body.requestId }),
    ...(context.idempotencyKey === undefined ? {} : { idempotencyKey: context.idempotencyKey }),
  };
  const reason = body.reasons[0]?.reason;
  const said = summarize(body.reasons);
  const what = context.operation;

  if (reason !== undefined && IDEMPOTENCY_REASONS.has(reason)) {
    return new IdempotencyError(`${what} refused the idempotency key: ${said}`, details);
  }
  if (reason !== undefined && ORDER_REASONS.has(reason)) {
    return new OrderStateError(`${what} was refused: ${said}`, details);
  }
  switch (status) {
    case 400:
      return new InvalidRequestError(
        `${what} was rejected as invalid: ${said || "no details given"}`,
        details,
      );
    case 401:
      return new AuthenticationError(
        `${what} was refused: the access token is missing, wrong or expired`,
        details,
      );
    case 404:
      return new NotFoundError(`${what}: not found for this merchant`, details);
    case 422:
      return new DeclinedError(`${what} was declined: ${said || "no reason given"}`, details);
    case 503:
      return new ServiceUnavailableError(
        `${what}: the service is unavailable; repeat with the same idempotency key`,
        details,
      );
    default:
      return new UnexpectedResponseError(
        `${what}: unexpected HTTP ${status}${said ? `: ${said}` : ""}`,
        details,
      );
  }
}

/** "TOKEN_REVOKED (Customer token revoked)"; several joined with "; ". */
function summarize(reasons: ReadonlyArray<ErrorReasonEntry>): string {
  return reasons
    .map((entry) => {
      const text = entry.message || errorReasonInfo(entry.reason)?.description || "";
      return text ? `${entry.reason} (${text})` : entry.reason;
    })
    .join("; ");
}
