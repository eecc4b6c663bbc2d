import { Agent, request } from "undici";
import { type CellResult, median, runCell } from "../measure.js";
import type { SandboxHost } from "../sandbox-host.js";
import { rawUndiciVariant } from "../variants/raw-undici.js";
import { MAX_CONNECTIONS } from "../variants/variant.js";
import { fetchAccessToken } from "../wire.js";

// Row 5: what the sandbox serves with the cheapest possible client (raw undici, concurrency 64),
// and how busy its process is meanwhile, so nobody mistakes it for the bottleneck.

export interface CapacityCell {
  endpoint: string;
  concurrency: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the sandbox process in percent of one core (NaN when it runs in this process). */
  sandboxCpuPercent: number;
  /** opsPerSec scaled to a fully busy sandbox core: a rough ceiling of the sandbox alone. */
  extrapolatedSandboxCeiling: number;
}

export async function measureSandboxCapacity(
  host: SandboxHost,
  settings: { operations: number; rounds: number; concurrency: number },
): Promise<CapacityCell[]> {
  const shop = await host.openShop();
  const agent = new Agent({ connections: MAX_CONNECTIONS });
  const accessToken = await fetchAccessToken(shop, agent);
  const tokenUrl = new URL(`/purchase/customer-tokens/${shop.customerToken}`, shop.baseUrl);
  const headers = { accept: "application/json", authorization: `Bearer ${accessToken}` };
  const getCustomerToken = async () => {
    const response = await request(tokenUrl, { dispatcher: agent, method: "GET", headers });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`GET customer token answered ${response.statusCode}`);
  };
  const create = await rawUndiciVariant(shop);
  try {
    const endpoints = [
      { endpoint: "GET /purchase/customer-tokens/{token}", op: getCustomerToken },
      { endpoint: "POST /purchase/authorizations", op: create.create },
    ];
    const cells: CapacityCell[] = [];
    for (const { endpoint, op } of endpoints) {
      await runCell(op, {
        operations: Math.ceil(settings.operations / 4),
        concurrency: settings.concurrency,
      });
      const rounds: Array<CellResult & { cpu: number }> = [];
      for (let round = 0; round < settings.rounds; round++) {
        const before = await host.cpuMicros();
        const cell = await runCell(op, {
          operations: settings.operations,
          concurrency: settings.concurrency,
        });
        const cpu = (((await host.cpuMicros()) - before) / (cell.seconds * 1e6)) * 100;
        rounds.push({ ...cell, cpu });
      }
      const opsPerSec = median(rounds.map((r) => r.opsPerSec));
      const sandboxCpuPercent = median(rounds.map((r) => r.cpu));
      cells.push({
        endpoint,
        concurrency: settings.concurrency,
        opsPerSec,
        p50Ms: median(rounds.map((r) => r.p50Ms)),
        p99Ms: median(rounds.map((r) => r.p99Ms)),
        sandboxCpuPercent,
        extrapolatedSandboxCeiling: opsPerSec / (sandboxCpuPercent / 100),
      });
    }
    return cells;
  } finally {
    await create.close();
    await agent.close();
  }
}
