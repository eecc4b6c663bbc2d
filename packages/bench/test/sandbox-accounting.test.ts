import { describe, expect, it } from "vitest";
import { accountCreate, busyLayers, wholeMicroLayers } from "../bench/rows/sandbox-accounting.js";
import {
  BUSY_FLOOR_ENDPOINT,
  CREATE_ENDPOINT,
  FLOOR_ENDPOINT,
  SMALL_STORES_ENDPOINT,
  TCP_FLOOR_ENDPOINT,
  TCP_SANDBOX_ENDPOINT,
} from "../bench/rows/sandbox-capacity.js";
import { ACCOUNT_CELLS, capacityCell } from "./support/capacity-cells.js";

// Row 5's account of a create's CPU: each layer is a difference of two targets measured side by side.
// A target swapped for another would move µs between layers and still add up, so each target's
// rounds are told apart here by their size; and every target's rounds are skewed (a slow round
// among steady ones), so a median would not pass for the mean (support/capacity-cells.ts).

const cell = capacityCell;
const cells = ACCOUNT_CELLS;

describe("row 5's account of a create", () => {
  it("gives each target's mean CPU per request over its rounds", () => {
    expect(accountCreate(cells)).toMatchObject({
      rounds: 3,
      tcpMicros: 25,
      nodeHttpMicros: 35,
      smallStoresMicros: 55,
      fullStoresMicros: 70,
    });
  });

  it("gives the layers in whole µs that add up to the create's total", () => {
    const layers = wholeMicroLayers({
      ...accountCreate(cells)!,
      tcpMicros: 22.4,
      nodeHttpMicros: 33.9,
      smallStoresMicros: 45.3,
      fullStoresMicros: 56.7,
    });
    // Each difference rounded on its own would read 22 + 12 + 11 + 11 = 56 against a total of 57.
    expect(layers).toEqual({ tcp: 22, nodeHttp: 12, create: 11, fullStores: 12, total: 57 });
    expect(layers.tcp + layers.nodeHttp + layers.create + layers.fullStores).toBe(layers.total);
  });

  it("pools the create over node:http round by round: the pairs stay together", () => {
    // The machine slows both down together in round 3: paired, every round says 2.0 exactly.
    const paired = accountCreate([
      cell(CREATE_ENDPOINT, [60, 62, 120]),
      cell(SMALL_STORES_ENDPOINT, [50, 52, 100]),
      cell(FLOOR_ENDPOINT, [30, 31, 60]),
      cell(TCP_FLOOR_ENDPOINT, [20, 21, 40]),
    ])!;
    expect(paired.createOverNodeHttp.ratio).toBeCloseTo(242 / 121, 10);
    expect(paired.createOverNodeHttp.interval[0]).toBeCloseTo(2, 10);
    expect(paired.createOverNodeHttp.interval[1]).toBeCloseTo(2, 10);
  });

  it("uses the same rounds of every target when one has more", () => {
    const extra = cells.map((c) =>
      c.endpoint === FLOOR_ENDPOINT ? { ...c, roundCpuMicrosPerOp: [...c.roundCpuMicrosPerOp, 1_000] } : c,
    );
    expect(accountCreate(extra)).toMatchObject({ rounds: 3, nodeHttpMicros: 35 });
  });

  it("gives no account when a target is missing or a round has no CPU figure", () => {
    expect(accountCreate(cells.filter((c) => c.endpoint !== TCP_FLOOR_ENDPOINT))).toBeUndefined();
    const withRound = (value: unknown) =>
      cells.map((c) =>
        c.endpoint === CREATE_ENDPOINT ? { ...c, roundCpuMicrosPerOp: [60, value as number, 88] } : c,
      );
    expect(accountCreate(withRound(Number.NaN))).toBeUndefined(); // the sandbox in this process
    expect(accountCreate(withRound(null))).toBeUndefined(); // the same, read back from latest.json
  });
});

describe("row 5's split of the create by the busy floor", () => {
  // The busy floor's mean over the rounds is 61 (median 58); its computation was 22.4 µs per request.
  const busy = { ...cell(BUSY_FLOOR_ENDPOINT, [56, 58, 69]), busyMicros: 22.4 };

  it("gives the busy floor's mean over the same rounds and the work it was given", () => {
    const withBusy = [...cells, { ...busy, roundCpuMicrosPerOp: [...busy.roundCpuMicrosPerOp, 500] }];
    expect(accountCreate(withBusy)?.busy).toEqual({ ownWorkMicros: 22.4, busyFloorMicros: 61 });
  });

  it("carries the own work measured after the rounds, when there is one", () => {
    const after = { ...busy, ownWorkAfterMicros: 24.1 };
    expect(accountCreate([...cells, after])?.busy).toEqual({
      ownWorkMicros: 22.4,
      busyFloorMicros: 61,
      ownWorkAfterMicros: 24.1,
    });
    expect(
      accountCreate([...cells, { ...busy, ownWorkAfterMicros: null as unknown as number }])?.busy,
    ).toEqual({
      ownWorkMicros: 22.4,
      busyFloorMicros: 61,
    });
  });

  it("splits the create's layers above node:http into parts that add up to its total", () => {
    // node:http 35, the create 70: 22 of work, 61 − 35 − 22 = 4 for serving busy, 70 − 61 = 9 beyond.
    const split = busyLayers(accountCreate([...cells, busy])!);
    expect(split).toEqual({ ownWork: 22, servingBusy: 4, beyondComputation: 9, busyFloor: 61, total: 70 });
    expect(35 + split!.ownWork + split!.servingBusy + split!.beyondComputation).toBe(split!.total);
  });

  it("has no split without the busy floor, or when one of its figures is missing", () => {
    expect(accountCreate(cells)?.busy).toBeUndefined();
    expect(busyLayers(accountCreate(cells)!)).toBeUndefined();
    const { busyMicros: _dropped, ...withoutWork } = busy;
    expect(accountCreate([...cells, withoutWork])?.busy).toBeUndefined();
    expect(
      accountCreate([...cells, { ...busy, roundCpuMicrosPerOp: [56, Number.NaN, 69] }])?.busy,
    ).toBeUndefined();
    expect(accountCreate([...cells, { ...busy, roundCpuMicrosPerOp: [56, 58] }])?.busy).toBeUndefined();
    // The rest of the account stands without it.
    expect(accountCreate([...cells, withoutWork])).toMatchObject({ rounds: 3, fullStoresMicros: 70 });
  });
});

describe("row 5's create over bare TCP", () => {
  // Over TCP 45, 47, 67: mean 53 (median 47).
  const overTcp = cell(TCP_SANDBOX_ENDPOINT, [45, 47, 67]);

  it("gives its mean CPU per create over the same rounds as the rest", () => {
    const account = accountCreate([...cells, { ...overTcp, roundCpuMicrosPerOp: [45, 47, 67, 500] }]);
    expect(account?.overTcpMicros).toBe(53);
  });

  it("is left out when the run has none, or a round of it has no CPU figure; the rest stands", () => {
    expect(accountCreate(cells)?.overTcpMicros).toBeUndefined();
    const withGap = { ...overTcp, roundCpuMicrosPerOp: [45, Number.NaN, 67] };
    expect(accountCreate([...cells, withGap])?.overTcpMicros).toBeUndefined();
    expect(
      accountCreate([...cells, { ...overTcp, roundCpuMicrosPerOp: [45, 47] }])?.overTcpMicros,
    ).toBeUndefined();
    expect(accountCreate([...cells, withGap])).toMatchObject({ rounds: 3, fullStoresMicros: 70 });
  });
});
