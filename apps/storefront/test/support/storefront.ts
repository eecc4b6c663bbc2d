import { loadConfig } from "../../src/config.js";
import { type RunningStorefront, startStorefront } from "../../src/storefront.js";

export interface TestStorefront extends RunningStorefront {
  /** What the shop logged (failed requests, refused webhooks). */
  logs: string[];
}

/** The shop as `pnpm start` runs it (embedded sandbox), on a free port. */
export async function startTestStorefront(env: Record<string, string> = {}): Promise<TestStorefront> {
  const logs: string[] = [];
  const record =
    (level: string) =>
    (message: string, meta?: unknown): void => {
      logs.push(`${level} ${message} ${JSON.stringify(meta ?? {})}`);
    };
  const running = await startStorefront(loadConfig({ PORT: "0", ...env }), {
    logger: { warn: record("warn"), error: record("error") },
  });
  return Object.assign(running, { logs });
}
