import { type PairedRatio, pairedRatio } from "../paired-ratio.js";
import {
  type CapacityCell,
  CREATE_ENDPOINT,
  FLOOR_ENDPOINT,
  SMALL_STORES_ENDPOINT,
  TCP_FLOOR_ENDPOINT,
} from "./sandbox-capacity.js";

// Where the sandbox's create spends its CPU, layer by layer, from row 5's alternating rounds: what a
// loopback socket costs to read a request and write an answer (the TCP floor), what node:http adds
// (its floor), what the create adds with small stores, and what full stores add. Each layer is the
// difference of two targets measured side by side, so the machine's hour moves them together.

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
  return {
    rounds,
    tcpMicros: mean(tcp),
    nodeHttpMicros: mean(nodeHttp),
    smallStoresMicros: mean(small),
    fullStoresMicros: mean(full),
    createOverNodeHttp: pairedRatio(full, nodeHttp),
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
