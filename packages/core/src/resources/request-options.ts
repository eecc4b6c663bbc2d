import { z } from "zod";
import { UnexpectedResponseError, ValidationError } from "../errors/errors.js";
import type { HttpResponse } from "../http/transport.js";
import { newIdempotencyKey } from "../idempotency/keys.js";
import { guidSchema } from "../schemas/common.js";
import { checkWith } from "../validation/issues.js";
import { parseOrThrow } from "../validation/parse.js";

/** Per-call options of every operation. */
export interface RequestOptions {
  /** Aborts the call, including retries and backoff. */
  signal?: AbortSignal;
  /**
   * Ends this call, retries and backoff included, after this many milliseconds: the client's
   * `deadlineMs` for one call, never longer than it. Unlike an abort it costs no timer or signal,
   * and a write that may have reached the service ends as an unknown outcome, as at the client's
   * deadline. A whole number from 1 to 3,600,000 (the most the client's own may be).
   */
  deadlineMs?: number;
}

/** Per-call options of writes. */
export interface WriteOptions extends RequestOptions {
  /**
   * A GUID that makes the write safe to repeat. Generated when omitted; pass your own (see
   * `idempotencyKeyFor`) so a process that restarts mid-call repeats it with the same key.
   */
  idempotencyKey?: string;
  /**
   * When this key was first sent, if it was (your write-ahead record's time). Past the service's
   * idempotency window (one hour less the safety margin) the call throws
   * `IdempotencyWindowPassedError` and sends nothing: the service may treat an old key as new. So
   * it does for a time later than the client's clock by more than the margin (another machine's
   * clock): the key's age cannot be told.
   */
  firstSentAt?: Date;
}

/**
 * The `firstSentAt` of the options, checked before any network call: a valid Date, given with the
 * idempotency key it was first sent with (with a key generated now it would describe no send).
 */
export function resolveFirstSentAt(options: WriteOptions | undefined): { firstSentAt?: Date } {
  const value = options?.firstSentAt;
  if (value === undefined) return {};
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new ValidationError([
      { path: "firstSentAt", rule: "type", message: "firstSentAt must be a valid Date" },
    ]);
  }
  if (options?.idempotencyKey === undefined) {
    throw new ValidationError([
      {
        path: "idempotencyKey",
        rule: "required",
        message: "idempotencyKey is required with firstSentAt: the key that was first sent then",
      },
    ]);
  }
  return { firstSentAt: value };
}

/** Per-call options must be an object when given (JavaScript callers can pass anything). */
export function checkOptionsObject(options: unknown): void {
  if (typeof options !== "object" || options === null) {
    throw new ValidationError([{ path: "options", rule: "type", message: "options must be an object" }]);
  }
}

/** A call's `deadlineMs`: at most what the client's own `deadlineMs` may be. */
const deadlineMsSchema = z.number().int().min(1).max(3_600_000);

/**
 * The options every call hands the executor (`signal`, `deadlineMs`), checked before any network
 * call: a wrong `deadlineMs` throws a `ValidationError` naming it and the rule it breaks.
 */
export function callLimits(options: RequestOptions | undefined): {
  signal?: AbortSignal;
  deadlineMs?: number;
} {
  if (options === undefined) return {};
  checkOptionsObject(options);
  const { signal, deadlineMs } = options;
  if (deadlineMs === undefined) return signal === undefined ? {} : { signal };
  const checked = parseOrThrow(deadlineMsSchema, deadlineMs, "deadlineMs");
  return signal === undefined ? { deadlineMs: checked } : { signal, deadlineMs: checked };
}

/**
 * A check for `Call.accepts`: the 2xx body parses with `schema`, and `fits` (when given) holds for
 * what it parsed to and the answer's status.
 */
export function bodyMatches<T extends z.ZodType>(
  schema: T,
  fits?: (data: z.output<T>, status: number) => boolean,
): (response: HttpResponse) => boolean {
  return (response) => {
    try {
      const checked = checkedBody(schema, response);
      return checked.success && (fits === undefined || fits(checked.data, response.status));
    } catch {
      return false;
    }
  };
}

/**
 * The body of `response` checked with `schema`, parsed once per answer: `bodyMatches` checks it
 * while the call runs and `parseSuccessBody` reads the same result (not a second JSON.parse and
 * check of the same text).
 */
function checkedBody<T extends z.ZodType>(
  schema: T,
  response: HttpResponse,
): { success: true; data: z.output<T> } | { success: false } {
  const memo = response.checked;
  if (memo !== undefined && memo.schema === schema) {
    return memo.result as { success: true; data: z.output<T> } | { success: false };
  }
  let json: unknown;
  try {
    json = JSON.parse(response.body);
  } catch {
    json = undefined;
  }
  const result = checkWith(schema, json);
  response.checked = { schema, result };
  return result;
}

/** The caller's key (checked to be a GUID before any network call) or a fresh one. */
export function resolveIdempotencyKey(options: WriteOptions | undefined): string {
  if (options?.idempotencyKey === undefined) return newIdempotencyKey();
  return parseOrThrow(guidSchema, options.idempotencyKey, "idempotencyKey");
}

/** Checks an identifier argument (orderId, customerToken) before any network call. */
export function checkGuidArgument(value: unknown, name: string): string {
  return parseOrThrow(guidSchema, value, name);
}

/** Parses a 2xx JSON body; a body that does not match is the service's fault, reported as such. */
export function parseSuccessBody<T extends z.ZodType>(
  schema: T,
  response: HttpResponse,
  context: { operation: string; idempotencyKey?: string },
): z.output<T> {
  const parsed = checkedBody(schema, response);
  if (parsed.success) return parsed.data;
  throw new UnexpectedResponseError(
    `${context.operation}: HTTP ${response.status} with a body this client does not understand`,
    {
      status: response.status,
      ...(context.idempotencyKey === undefined ? {} : { idempotencyKey: context.idempotencyKey }),
    },
  );
}
