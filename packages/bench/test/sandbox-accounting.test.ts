import { describe, expect, it } from "vitest";
import { accountCreate } from "../bench/rows/sandbox-accounting.js";
import {
  type CapacityCell,
  CREATE_ENDPOINT,
  FLOOR_ENDPOINT,
  SMALL_STORES_ENDPOINT,
  TCP_FLOOR_ENDPOINT,
} from "../bench/rows/sandbox-capacity.js";

// Row 5's account of a create's CPU: each layer is a difference of two targets measured side by side.
// A target swapped for another would move µs between layers and still add up, so each target's
// rounds are told apart here by their size.

function cell(endpoint: string, roundCpuMicrosPerOp: number[]): CapacityCell {
  return {
    endpoint,
    concurrency: 64,
    opsPerSec: 10_000,
    p50Ms: 3,
    p99Ms: 9,
    sandboxCpuPercent: 90,
    extrapolatedSandboxCeiling: 11_000,
    roundCpuMicrosPerOp,
  };
}

const cells = [
  cell("GET /purchase/customer-tokens/{token}", [30, 30]),
  cell(CREATE_ENDPOINT, [60, 70, 65]),
  cell(SMALL_STORES_ENDPOINT, [50, 52, 54]),
  cell(FLOOR_ENDPOINT, [30, 36, 33]),
  cell(TCP_FLOOR_ENDPOINT, [20, 22, 24]),
];

describe("row 5's account of a create", () => {
  it("gives each target's mean CPU per request over its rounds", () => {
    const accounting = accountCreate(cells);
    expect(accounting).toMatchObject({
      rounds: 3,
      tcpMicros: 22,
      nodeHttpMicros: 33,
      smallStoresMicros: 52,
      fullStoresMicros: 65,
    });
  });

  it("gives the create over node:http pooled over the paired rounds", () => {
    const { createOverNodeHttp } = accountCreate(cells)!;
    expect(createOverNodeHttp.ratio).toBeCloseTo(195 / 99, 10);
    expect(createOverNodeHttp.interval[0]).toBeLessThanOrEqual(createOverNodeHttp.ratio);
    expect(createOverNodeHttp.interval[1]).toBeGreaterThanOrEqual(createOverNodeHttp.ratio);
  });

  it("gives no account when a target is missing or its CPU was not measured", () => {
    expect(accountCreate(cells.filter((c) => c.endpoint !== TCP_FLOOR_ENDPOINT))).toBeUndefined();
    const inProcess = cells.map((c) =>
      c.endpoint === CREATE_ENDPOINT
        ? { ...c, roundCpuMicrosPerOp: [Number.NaN, Number.NaN, Number.NaN] }
        : c,
    );
    expect(accountCreate(inProcess)).toBeUndefined();
  });
});
