// The ranges every control input is checked against. Each bound keeps a later request cheap and
// answerable: no value a test can send may make the sandbox throw, stall or grow without bound.

/**
 * The virtual clock never passes the last millisecond of year 9999: the service's own time type
 * (.NET DateTime) ends there, ISO 8601 strings stay four-digit years, and `Date` stays valid.
 */
export const MAX_VIRTUAL_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A virtual time no later than MAX_VIRTUAL_TIME, so it can always be written as ISO 8601. */
export function clampToVirtualRange(time: number): number {
  return Math.min(time, MAX_VIRTUAL_TIME);
}

export const LIMITS = {
  /** Names, ids, store ids, scopes, client ids. */
  textLength: 255,
  secretLength: 512,
  urlLength: 2048,
  webhookUrls: 20,
  webhookSecrets: 10,
  /** `failNextAttempts` entries, and the length of one reason. */
  failNextAttempts: 1000,
  reasonLength: 100,
  /** Funds in cents: 9,999,999,999,999.99. */
  maxFundsCents: 999_999_999_999_999n,
  /** Longest funds string read (a million digits would take seconds to convert). */
  amountLength: 32,
  faultCount: 1_000_000_000,
  latencyMs: 600_000,
  retryAfterSeconds: 86_400,
  faultPathLength: 2048,
  faultMethodLength: 32,
  webhookConcurrency: 1024,
} as const;
