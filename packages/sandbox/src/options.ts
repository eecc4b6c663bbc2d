/** Options of `startSandbox` and of the in-process `Simulator`. Every field has a default. */
export interface SandboxOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1 (the control routes have no authentication). */
  host?: string;
  /** Seed of the pseudo-random generator behind fault probabilities; default 20240601. */
  seed?: number;
  /** Lifetime of access tokens in seconds of virtual time; default 3600. */
  tokenLifetimeSeconds?: number;
  /** Largest accepted request body in bytes; default 1 MiB. Larger bodies get 413. */
  maxBodyBytes?: number;
  /** Seed the demo merchant and customer tokens (see `DEMO`); default false. */
  demo?: boolean;
  /**
   * Webhook receivers of the demo merchant (needs `demo`), registered again after every reset.
   * Secrets default to `DEMO.webhookSecret`, so a shop can be configured once.
   */
  demoWebhooks?: { urls: readonly string[]; secrets?: readonly string[] };
  /** Scope given to API clients created without one; default "api://purchase-auth-sandbox/.default". */
  defaultScope?: string;
  /** How many entries each recorded list keeps (attempts, deliveries, events, token requests); default 10,000. */
  historyLimit?: number;
  /** How many authorizations and orders are kept; the oldest are forgotten beyond it; default 100,000. */
  maxStoredObjects?: number;
  /** How many idempotency keys are kept at most; the oldest are forgotten beyond it; default 100,000. */
  maxIdempotencyKeys?: number;
  /** How long a manual-capture order keeps its uncaptured remainder before it expires; default 30 days. */
  orderExpiryMs?: number;
  /** How long one webhook delivery may take (real time) before it counts as unanswered; default 10 s. */
  webhookTimeoutMs?: number;
  /**
   * How many webhook deliveries may be in flight to one receiver URL at once; default 16. The
   * deliveries about one authorization or customer token still go one at a time, in order.
   */
  webhookConcurrency?: number;
  /** Delays (virtual time) before each redelivery; default 1 min, 5 min, 30 min, 2 h, 8 h. */
  webhookRetryDelaysMs?: readonly number[];
  /** Log one line per request to stdout; default false (keeps benchmarks honest). */
  logRequests?: boolean;
}

export type ResolvedSandboxOptions = Required<SandboxOptions>;

export const DEFAULT_SCOPE = "api://purchase-auth-sandbox/.default";

export function resolveOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  return {
    port: options.port ?? 0,
    host: options.host ?? "127.0.0.1",
    seed: options.seed ?? 20240601,
    tokenLifetimeSeconds: positive(options.tokenLifetimeSeconds, 3600, "tokenLifetimeSeconds"),
    maxBodyBytes: positive(options.maxBodyBytes, 1024 * 1024, "maxBodyBytes"),
    demo: options.demo ?? false,
    demoWebhooks: demoWebhooks(options),
    defaultScope: options.defaultScope ?? DEFAULT_SCOPE,
    historyLimit: positive(options.historyLimit, 10_000, "historyLimit"),
    maxStoredObjects: positive(options.maxStoredObjects, 100_000, "maxStoredObjects"),
    maxIdempotencyKeys: positive(options.maxIdempotencyKeys, 100_000, "maxIdempotencyKeys"),
    orderExpiryMs: positive(options.orderExpiryMs, 30 * 24 * 3600_000, "orderExpiryMs"),
    webhookTimeoutMs: positive(options.webhookTimeoutMs, 10_000, "webhookTimeoutMs"),
    webhookConcurrency: wholeNumber(options.webhookConcurrency, 16, "webhookConcurrency"),
    webhookRetryDelaysMs: options.webhookRetryDelaysMs ?? [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000],
    logRequests: options.logRequests ?? false,
  };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  return value;
}

function wholeNumber(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new RangeError(`${name} must be a whole number above 0`);
  return value;
}

function demoWebhooks(options: SandboxOptions): { urls: readonly string[]; secrets?: readonly string[] } {
  const webhooks = options.demoWebhooks ?? { urls: [] };
  if (webhooks.urls.length > 0 && options.demo !== true) {
    throw new RangeError("demoWebhooks needs demo: true (they are the demo merchant's)");
  }
  return webhooks;
}
