import { describe, expect, it } from "vitest";
import type { MachineInfo } from "../bench/machine.js";
import { type BenchResults, formatReport } from "../bench/report.js";
import {
  BUSY_FLOOR_ENDPOINT,
  type CapacityCell,
  TCP_SANDBOX_ENDPOINT,
} from "../bench/rows/sandbox-capacity.js";
import { ACCOUNT_CELLS, capacityCell } from "./support/capacity-cells.js";

// Row 5's printed account: the split line reads the busy floor's cell (its S, and S after the
// rounds) and adds up; runs without the busy floor, or without S after the rounds, say n/a.

const machine = { node: "v20", cpus: 2, cpuModel: "test", loadAverage: [1, 1, 1] } as unknown as MachineInfo;

function report(cells: CapacityCell[]): string {
  const results: BenchResults = {
    startedAt: "2026-11-26T00:00:00.000Z",
    durationSeconds: 1,
    machine,
    sandboxPlacement: "child-process",
    attemptSchedule: "preferSynchronous",
    sandboxCapacity: cells,
    failedChecks: [],
  };
  return formatReport(results);
}

// Means: TCP 25, node:http 35, stores of 500 55, the create 70 (ACCOUNT_CELLS); the busy floor 61.
const cells = [...ACCOUNT_CELLS];
const busy = capacityCell(BUSY_FLOOR_ENDPOINT, [56, 58, 69], { busyMicros: 22.4, ownWorkAfterMicros: 24.1 });

describe("row 5's printed split of the create", () => {
  it("prints the own work, the busy floor and the parts that add up to the create", () => {
    expect(report([...cells, busy])).toContain(
      "the create's own work without HTTP (its handle in a loop) 22 µs (24 µs after the rounds); bare node:http computing that long per request 61 µs = node:http 35 + the computation 22 +4 more when that busy; the create +9 beyond it",
    );
  });

  it("says n/a without the busy floor, and for a missing figure after the rounds", () => {
    expect(report(cells)).toContain("the create's own work: n/a (no busy floor in this run)");
    const { ownWorkAfterMicros: _dropped, ...withoutAfter } = busy;
    expect(report([...cells, withoutAfter])).toContain("22 µs (n/a after the rounds)");
  });
});

describe("row 5's printed create over bare TCP", () => {
  it("prints its mean CPU per create and what that is at a full core", () => {
    const overTcp = capacityCell(TCP_SANDBOX_ENDPOINT, [40, 40, 45]); // mean 41.7 (median 40)
    expect(report([...cells, overTcp])).toMatch(
      /the same create over bare TCP instead of node:http \(.*\): 42 µs per create, ≈ 24,000 creates\/s at a full core$/m,
    );
  });

  it("says n/a when the run has none", () => {
    expect(report(cells)).toContain("the create over bare TCP: n/a (not measured in every round)");
  });
});
