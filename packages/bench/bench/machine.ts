import { cpus, freemem, loadavg, platform, release, totalmem } from "node:os";

/** What the numbers were measured on; benchmarks without it cannot be compared. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  node: string;
  v8: string;
  platform: string;
  osRelease: string;
  totalMemoryMiB: number;
  freeMemoryMiB: number;
  /** 1, 5 and 15 minute load averages when the run started: a hint of other work on the machine. */
  loadAverage: number[];
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? "unknown",
    node: process.version,
    v8: process.versions.v8,
    platform: platform(),
    osRelease: release(),
    totalMemoryMiB: Math.round(totalmem() / 1024 / 1024),
    freeMemoryMiB: Math.round(freemem() / 1024 / 1024),
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
  };
}
