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
// difference of two targets measured side by side, so the machine's hour moves them together; the
// create's ratio to node:http carries across hours better than its µs do.

export interface CreateAccounting {
  rounds: number;
  /** CPU µs of the serving process per request, the mean over the rounds. */
  tcpMicros: number;
  nodeHttpMicros: number;
  smallStoresMicros: number;
  fullStoresMicros: number;
  /** The create (stores full) over bare node:http, pooled over the rounds, with its paired interval. */
  createOverNodeHttp: PairedRatio;
}

/** Undefined when a target is missing or its CPU was not measured (the sandbox in this process). */
export function accountCreate(cells: readonly CapacityCell[]): CreateAccounting | undefined {
  const rounds = (endpoint: string) => cells.find((cell) => cell.endpoint === endpoint)?.roundCpuMicrosPerOp;
  const tcp = rounds(TCP_FLOOR_ENDPOINT);
  const nodeHttp = rounds(FLOOR_ENDPOINT);
  const small = rounds(SMALL_STORES_ENDPOINT);
  const full = rounds(CREATE_ENDPOINT);
  if (tcp === undefined || nodeHttp === undefined || small === undefined || full === undefined)
    return undefined;
  if ([tcp, nodeHttp, small, full].some((values) => values.length === 0 || values.some(Number.isNaN))) {
    return undefined;
  }
  return {
    rounds: Math.min(tcp.length, nodeHttp.length, small.length, full.length),
    tcpMicros: mean(tcp),
    nodeHttpMicros: mean(nodeHttp),
    smallStoresMicros: mean(small),
    fullStoresMicros: mean(full),
    createOverNodeHttp: pairedRatio(full, nodeHttp),
  };
}

function mean(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0) / values.length;
}
