import { type PairedRatio, pairedRatio } from "../paired-ratio.js";
import {
  BUSY_FLOOR_ENDPOINT,
  type CapacityCell,
  CREATE_ENDPOINT,
  FLOOR_ENDPOINT,
  SMALL_STORES_ENDPOINT,
  TCP_FLOOR_ENDPOINT,
  TCP_SANDBOX_ENDPOINT,
} from "./sandbox-capacity.js";

// Where the sandbox's create spends its CPU, layer by layer, from row 5's alternating rounds: what a
// loopback socket costs to read a request and write an answer (the TCP floor), what node:http adds
// (its floor), what the create adds with small stores, and what full stores add. Each layer is the
// difference of two targets measured side by side, so the machine's hour moves them together.
//
// The floors serve faster than the bench's client sends; the sandbox is the slower side. Serving at
// a full core can cost the transport more per request (on loopback the answer's write delivers it
// and wakes the client, then idle), which the layers above would charge to the create. The busy
// floor, node:http computing as long as the create's own work takes without HTTP, splits the
// create's layers into: its work; what being that busy costs the transport; and what its work costs
// beyond the same CPU spent on computation alone.

export interface CreateAccounting {
  /** Rounds every target has (each mean below is over these, the first `rounds` of each target). */
  rounds: number;
  /** CPU µs of the serving process per request, the mean over the rounds. */
  tcpMicros: number;
  nodeHttpMicros: number;
  smallStoresMicros: number;
  fullStoresMicros: number;
  /** The create (stores full) over bare node:http, pooled over the rounds, with its paired interval. */
  createOverNodeHttp: PairedRatio;
  /** Absent for runs without the busy floor (before it existed, or without its CPU figure). */
  busy?: {
    /** The create's own work without HTTP (the sandbox's `handle` in a loop), CPU µs per create. */
    ownWorkMicros: number;
    /** The busy floor's CPU µs per request, the mean over the same rounds. */
    busyFloorMicros: number;
    /** The own work measured again after the rounds, when it was. */
    ownWorkAfterMicros?: number;
  };
  /**
   * The same create served on the TCP floor's framing instead of node:http: its mean CPU µs per
   * create over the same rounds. Absent for runs without it. (No ratio to the create over node:http:
   * that one is the bench's sandbox, which has served the rows before; this one is a new process.)
   */
  overTcpMicros?: number;
}

/**
 * Undefined when a target is missing or any of its rounds has no CPU figure (the sandbox in this
 * process measures none: NaN, which results/latest.json stores as null).
 */
export function accountCreate(cells: readonly CapacityCell[]): CreateAccounting | undefined {
  const targets = [TCP_FLOOR_ENDPOINT, FLOOR_ENDPOINT, SMALL_STORES_ENDPOINT, CREATE_ENDPOINT].map(
    (endpoint) => cells.find((cell) => cell.endpoint === endpoint)?.roundCpuMicrosPerOp ?? [],
  );
  const rounds = Math.min(...targets.map((values) => values.length));
  if (rounds === 0) return undefined;
  const [tcp, nodeHttp, small, full] = targets.map((values) => values.slice(0, rounds)) as [
    number[],
    number[],
    number[],
    number[],
  ];
  if (![tcp, nodeHttp, small, full].every((values) => values.every(isFiniteNumber))) return undefined;
  const accounting: CreateAccounting = {
    rounds,
    tcpMicros: mean(tcp),
    nodeHttpMicros: mean(nodeHttp),
    smallStoresMicros: mean(small),
    fullStoresMicros: mean(full),
    createOverNodeHttp: pairedRatio(full, nodeHttp),
  };
  const busyCell = cells.find((cell) => cell.endpoint === BUSY_FLOOR_ENDPOINT);
  const busyRounds = roundsOf(cells, BUSY_FLOOR_ENDPOINT, rounds);
  if (busyRounds !== undefined && isFiniteNumber(busyCell?.busyMicros)) {
    accounting.busy = { ownWorkMicros: busyCell.busyMicros, busyFloorMicros: mean(busyRounds) };
    if (isFiniteNumber(busyCell.ownWorkAfterMicros)) {
      accounting.busy.ownWorkAfterMicros = busyCell.ownWorkAfterMicros;
    }
  }
  const overTcp = roundsOf(cells, TCP_SANDBOX_ENDPOINT, rounds);
  if (overTcp !== undefined) accounting.overTcpMicros = mean(overTcp);
  return accounting;
}

/** The first `rounds` CPU figures of `endpoint`'s cell; undefined unless it has that many, all finite. */
function roundsOf(cells: readonly CapacityCell[], endpoint: string, rounds: number): number[] | undefined {
  const values = cells.find((cell) => cell.endpoint === endpoint)?.roundCpuMicrosPerOp.slice(0, rounds);
  return values?.length === rounds && values.every(isFiniteNumber) ? values : undefined;
}

/**
 * The create's layers above node:http, split by the busy floor, in whole µs that add up to the
 * create's total: its own work; what serving that busy costs node:http beyond its floor; what the
 * create costs beyond the busy floor (the own work, taken in a loop, already holds its allocation
 * and garbage collection there; what it costs more among requests in flight is not in the busy
 * floor's spin). Undefined without it.
 */
export function busyLayers(
  accounting: CreateAccounting,
):
  | { ownWork: number; servingBusy: number; beyondComputation: number; busyFloor: number; total: number }
  | undefined {
  const { busy } = accounting;
  if (busy === undefined) return undefined;
  const nodeHttp = Math.round(accounting.nodeHttpMicros);
  const ownWork = Math.round(busy.ownWorkMicros);
  const busyFloor = Math.round(busy.busyFloorMicros);
  const total = Math.round(accounting.fullStoresMicros);
  return {
    ownWork,
    servingBusy: busyFloor - nodeHttp - ownWork,
    beyondComputation: total - busyFloor,
    busyFloor,
    total,
  };
}

/** The layers in whole µs, as differences of the rounded running totals: they add up to `total`. */
export function wholeMicroLayers(accounting: CreateAccounting): {
  tcp: number;
  nodeHttp: number;
  create: number;
  fullStores: number;
  total: number;
} {
  const tcp = Math.round(accounting.tcpMicros);
  const nodeHttp = Math.round(accounting.nodeHttpMicros);
  const small = Math.round(accounting.smallStoresMicros);
  const total = Math.round(accounting.fullStoresMicros);
  return { tcp, nodeHttp: nodeHttp - tcp, create: small - nodeHttp, fullStores: total - small, total };
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function mean(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0) / values.length;
}
