import {
  type CapacityCell,
  CREATE_ENDPOINT,
  FLOOR_ENDPOINT,
  SMALL_STORES_ENDPOINT,
  TCP_FLOOR_ENDPOINT,
} from "../../bench/rows/sandbox-capacity.js";

// Row 5's cells as tests of its account and of its printed lines build them.

/** A cell of row 5 with the given rounds (and any other fields); the rest fixed and unread. */
export function capacityCell(
  endpoint: string,
  roundCpuMicrosPerOp: number[],
  extra: Partial<CapacityCell> = {},
): CapacityCell {
  return {
    endpoint,
    concurrency: 64,
    opsPerSec: 10_000,
    p50Ms: 3,
    p99Ms: 9,
    sandboxCpuPercent: 90,
    extrapolatedSandboxCeiling: 11_000,
    roundCpuMicrosPerOp,
    ...extra,
  };
}

/**
 * The targets of the create's account, each told apart by its rounds' size, every one skewed (a slow
 * round among steady ones) so a median would not pass for the mean. Means: the create 70, stores of
 * 500 55, node:http 35, TCP 25. Medians: 62, 52, 32, 21.
 */
export const ACCOUNT_CELLS: readonly CapacityCell[] = [
  capacityCell("GET /purchase/customer-tokens/{token}", [30, 30]),
  capacityCell(CREATE_ENDPOINT, [60, 62, 88]),
  capacityCell(SMALL_STORES_ENDPOINT, [50, 52, 63]),
  capacityCell(FLOOR_ENDPOINT, [31, 32, 42]),
  capacityCell(TCP_FLOOR_ENDPOINT, [20, 21, 34]),
];
