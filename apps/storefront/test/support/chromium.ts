import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium } from "playwright-core";

// Debian's Chromium, driven by playwright-core (no browser download). CHROMIUM_PATH, when set, is
// the only place looked at.

const CANDIDATES = process.env.CHROMIUM_PATH
  ? [process.env.CHROMIUM_PATH]
  : ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

export const INSTALL_HINT = "apt-get update && apt-get install -y chromium";

export function findChromium(): string | undefined {
  return CANDIDATES.find((path) => existsSync(path));
}

/** CI=true (or any value other than "false"/"0"): a missing browser must fail, not skip. */
export function inCi(): boolean {
  const value = process.env.CI;
  return value !== undefined && value !== "" && value !== "false" && value !== "0";
}

export function whereChromiumWasLooked(): string {
  return CANDIDATES.join(", ");
}

// Without the background-networking flags, Chromium's own connections (component updates, sync,
// QUIC probes) were refused many at a time on these machines.
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium with a fresh user-data directory, removed again on close. */
export async function launchChromium(executablePath: string): Promise<Chromium> {
  const userDataDir = mkdtempSync(join(tmpdir(), "storefront-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 860 },
    locale: "en-GB",
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** apps/storefront/test-results/screenshots, emptied for each run. */
export function screenshotDirectory(): string {
  const directory = fileURLToPath(new URL("../../test-results/screenshots/", import.meta.url));
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  return directory;
}
