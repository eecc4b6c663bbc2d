import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { forkRpcChild } from "../child-rpc.js";
import { type CellResult, median, rotate, runCell } from "../measure.js";
import type { SandboxHost } from "../sandbox-host.js";
import { rawUndiciVariant } from "../variants/raw-undici.js";
import { MAX_CONNECTIONS } from "../variants/variant.js";
import { fetchAccessToken, type ShopCredentials } from "../wire.js";

// Row 5: what the sandbox serves with the cheapest possible client (raw undici, concurrency 64),
// and how busy its process is meanwhile, so nobody mistakes it for the bottleneck. The create call
// is measured in rounds alternating with the floors under it, each in a process of its own: a bare
// node:http server that reads the same request and writes the same answer, and does nothing else;
// under that, a bare TCP server that writes the same bytes without parsing HTTP; and a second sandbox
// whose stores keep only a few hundred objects, to show what the size of the stores costs (records
// kept for thousands of creates are copied and promoted by the garbage collector); and a bare
// node:http server that computes, per request, as long as the create's own work takes without HTTP,
// to tell that work from what serving at a full core costs the transport (sandbox-accounting.ts); and
// the bench's sandbox served on the TCP floor's framing, to show about the best a transport of our
// own could reach.

export interface CapacityCell {
  endpoint: string;
  concurrency: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the serving process in percent of one core (NaN when the sandbox runs in this process). */
  sandboxCpuPercent: number;
  /** opsPerSec scaled to a fully busy core of the serving process: a rough ceiling of it alone. */
  extrapolatedSandboxCeiling: number;
  /** CPU µs of the serving process per request, each round's (index i of every target side by side). */
  roundCpuMicrosPerOp: number[];
  /** The busy floor's computation per request (µs): the create's own work, measured without HTTP. */
  busyMicros?: number;
  /** The create's own work measured again after the rounds (µs): how far `busyMicros` held. */
  ownWorkAfterMicros?: number;
}

/** The create's endpoint name in the cells: the goal's figure (the bench's sandbox, stores full). */
export const CREATE_ENDPOINT = "POST /purchase/authorizations";
/** The floor's endpoint name in the cells. */
export const FLOOR_ENDPOINT = "bare node:http, the create's answer";
/** The busy floor's endpoint name: bare node:http computing as long as the create's own work takes. */
export const BUSY_FLOOR_ENDPOINT = "bare node:http + a create's CPU time";
/** The floor under node:http: the same bytes read and written on a bare TCP socket. */
export const TCP_FLOOR_ENDPOINT = "bare TCP socket, the same bytes";
/**
 * The same create (the bench's sandbox options, stores full) served on the TCP floor's framing
 * instead of node:http: likely the best a transport of our own could reach. A diagnostic.
 */
export const TCP_SANDBOX_ENDPOINT = "create over bare TCP, stores full";
/** Objects and keys the small-store sandbox keeps (the bench's own sandbox keeps 20,000 of each). */
export const SMALL_STORES = 500;
/** The small-store sandbox's endpoint name in the cells: a diagnostic, not the goal's figure. */
export const SMALL_STORES_ENDPOINT = `create, stores of ${SMALL_STORES}`;

interface Target {
  endpoint: string;
  op: () => Promise<void>;
  cpuMicros: () => Promise<number>;
  busyMicros?: number;
}

export async function measureSandboxCapacity(
  host: SandboxHost,
  settings: { operations: number; rounds: number; concurrency: number; storesToFill: number },
): Promise<CapacityCell[]> {
  // Everything opened is closed, newest first, even when a later child fails to start or dies.
  const opened: Closable[] = [];
  const open = <T extends Closable>(resource: T): T => {
    opened.push(resource);
    return resource;
  };
  try {
    const shop = await host.openShop();
    const agent = open(new Agent({ connections: MAX_CONNECTIONS }));
    const accessToken = await fetchAccessToken(shop, agent);
    const tokenUrl = new URL(`/purchase/customer-tokens/${shop.customerToken}`, shop.baseUrl);
    const headers = { accept: "application/json", authorization: `Bearer ${accessToken}` };
    const getCustomerToken = async () => {
      const response = await request(tokenUrl, { dispatcher: agent, method: "GET", headers });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`GET customer token answered ${response.statusCode}`);
    };
    const create = open(await rawUndiciVariant(shop));
    const floor = open(await forkRpcChild<"cpuMicros">(childEntry("floor-process.js")));
    const floorCreate = open(await rawUndiciVariant({ ...shop, baseUrl: floor.ready }));
    const tcpFloor = open(await forkRpcChild<"cpuMicros">(childEntry("tcp-floor-process.js")));
    const tcpFloorCreate = open(await rawUndiciVariant({ ...shop, baseUrl: tcpFloor.ready }));
    const small = open(
      await forkRpcChild<"openShop" | "cpuMicros">(childEntry("sandbox-process.js"), {
        args: [`--stored=${SMALL_STORES}`],
      }),
    );
    const smallCreate = open(await rawUndiciVariant(await small.call<ShopCredentials>("openShop")));
    // The targets only the account reads: the busy floor (its work measured before any round, in the
    // sandbox whose creates the goal counts, its stores full) and the create over bare TCP. Not for a
    // sandbox in this process: its CPU cannot be told from the client's, so no account is made.
    const accountTargets: Target[] = [];
    if (host.placement === "child-process") {
      const ownWork = await host.ownWorkMicros();
      const busyFloor = open(
        await forkRpcChild<"cpuMicros">(childEntry("floor-process.js"), { args: [`--busy-us=${ownWork}`] }),
      );
      const busyFloorCreate = open(await rawUndiciVariant({ ...shop, baseUrl: busyFloor.ready }));
      accountTargets.push({
        endpoint: BUSY_FLOOR_ENDPOINT,
        op: busyFloorCreate.create,
        cpuMicros: () => busyFloor.call<number>("cpuMicros"),
        busyMicros: ownWork,
      });
      const tcpSandbox = open(
        await forkRpcChild<"openShop" | "cpuMicros">(childEntry("tcp-sandbox-process.js")),
      );
      const tcpSandboxCreate = open(
        await rawUndiciVariant(await tcpSandbox.call<ShopCredentials>("openShop")),
      );
      accountTargets.push({
        endpoint: TCP_SANDBOX_ENDPOINT,
        op: tcpSandboxCreate.create,
        cpuMicros: () => tcpSandbox.call<number>("cpuMicros"),
      });
    }

    const tokenReadCells = await measureTargets(
      [
        {
          endpoint: "GET /purchase/customer-tokens/{token}",
          op: getCustomerToken,
          cpuMicros: host.cpuMicros,
        },
      ],
      settings,
    );
    const createCells = await measureTargets(
      [
        { endpoint: CREATE_ENDPOINT, op: create.create, cpuMicros: host.cpuMicros },
        {
          endpoint: SMALL_STORES_ENDPOINT,
          op: smallCreate.create,
          cpuMicros: () => small.call<number>("cpuMicros"),
        },
        {
          endpoint: FLOOR_ENDPOINT,
          op: floorCreate.create,
          cpuMicros: () => floor.call<number>("cpuMicros"),
        },
        ...accountTargets,
        {
          endpoint: TCP_FLOOR_ENDPOINT,
          op: tcpFloorCreate.create,
          cpuMicros: () => tcpFloor.call<number>("cpuMicros"),
        },
      ],
      // The stores full before the first round, as in a long load test: otherwise a run of this row
      // alone (BENCH_ONLY=capacity) measured 15,000 creates into stores of 20,000 still growing.
      { ...settings, warmup: settings.storesToFill + settings.operations / 4 },
    );
    // Again after the rounds: S is one figure taken beside them, not in them; this shows how far it
    // held. A failure here loses only this figure (the report prints n/a), not the rounds.
    const ownWorkAfter =
      accountTargets.length === 0 ? Number.NaN : await host.ownWorkMicros().catch(() => Number.NaN);
    const cells = [
      ...tokenReadCells,
      ...createCells.map((cell) =>
        cell.endpoint === BUSY_FLOOR_ENDPOINT ? { ...cell, ownWorkAfterMicros: ownWorkAfter } : cell,
      ),
    ];
    const failures = await closeAll(opened);
    if (failures.length > 0) throw failures[0];
    return cells;
  } catch (error) {
    // The row's own error is the one to report: a failed close after it is only logged.
    for (const failure of await closeAll(opened)) console.error("row 5: a close failed too:", failure);
    throw error;
  }
}

interface Closable {
  close(): Promise<void>;
}

/** Closes each resource once, newest first, even when another's close fails; returns the failures. */
async function closeAll(opened: Closable[]): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (let resource = opened.pop(); resource !== undefined; resource = opened.pop()) {
    await resource.close().catch((error: unknown) => failures.push(error));
  }
  return failures;
}

function childEntry(file: string): string {
  return fileURLToPath(new URL(`../${file}`, import.meta.url));
}

/**
 * Each target warmed up (a quarter of a round unless told), then one unmeasured round of every target
 * in turn, then the measured rounds, the order of the targets rotating from round to round. Without the
 * unmeasured round, the first measured round cost the floors 1.2–1.6× their later rounds (three runs,
 * found in review), and means over the rounds carried that into every layer of the account.
 */
async function measureTargets(
  targets: readonly Target[],
  settings: { operations: number; rounds: number; concurrency: number; warmup?: number },
): Promise<CapacityCell[]> {
  const { operations, concurrency } = settings;
  const warmup = Math.ceil(settings.warmup ?? operations / 4);
  for (const target of targets) await runCell(target.op, { operations: warmup, concurrency });
  for (const target of targets) await runCell(target.op, { operations, concurrency });
  const rounds = targets.map((): Array<CellResult & { cpu: number; cpuMicrosPerOp: number }> => []);
  const indices = targets.map((_, index) => index);
  for (let round = 0; round < settings.rounds; round++) {
    for (const index of rotate(indices, round)) {
      const target = targets[index]!;
      const before = await target.cpuMicros();
      const cell = await runCell(target.op, { operations, concurrency });
      const cpuMicros = (await target.cpuMicros()) - before;
      const cpu = (cpuMicros / (cell.seconds * 1e6)) * 100;
      rounds[index]!.push({ ...cell, cpu, cpuMicrosPerOp: cpuMicros / operations });
    }
  }
  return targets.map((target, index) => {
    const measured = rounds[index]!;
    const opsPerSec = median(measured.map((r) => r.opsPerSec));
    const sandboxCpuPercent = median(measured.map((r) => r.cpu));
    return {
      endpoint: target.endpoint,
      concurrency,
      opsPerSec,
      p50Ms: median(measured.map((r) => r.p50Ms)),
      p99Ms: median(measured.map((r) => r.p99Ms)),
      sandboxCpuPercent,
      extrapolatedSandboxCeiling: opsPerSec / (sandboxCpuPercent / 100),
      roundCpuMicrosPerOp: measured.map((r) => r.cpuMicrosPerOp),
      ...(target.busyMicros === undefined ? {} : { busyMicros: target.busyMicros }),
    };
  });
}
