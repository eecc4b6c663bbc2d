import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { MemoryProbeInput, MemoryProbeResult } from "../memory-probe.js";
import type { SandboxHost } from "../sandbox-host.js";

// Row 4: heap growth of our client over many sequential creates, measured in a child process
// started with --expose-gc so full collections are possible and the sandbox's state is elsewhere.

export const MEMORY_LIMIT_BYTES = 10 * 1024 * 1024;

export async function measureMemory(
  host: SandboxHost,
  settings: { operations: number; warmup: number; samples: number },
): Promise<MemoryProbeResult & { limitBytes: number }> {
  const input: MemoryProbeInput = { shop: await host.openShop(), ...settings };
  const probe = fileURLToPath(new URL("../memory-probe.js", import.meta.url));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--expose-gc", probe, JSON.stringify(input)],
    {
      maxBuffer: 1024 * 1024,
    },
  );
  const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as MemoryProbeResult;
  return { ...result, limitBytes: MEMORY_LIMIT_BYTES };
}
