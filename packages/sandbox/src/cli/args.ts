import { parseArgs } from "node:util";
import type { SandboxOptions } from "../options.js";

// The CLI's flags, with environment variables as fallbacks (handy in Docker or a Procfile).
// A flag wins over its variable.

export const USAGE = `Usage: purchase-auth-sandbox [options]

  --port <n>                 port to listen on (default 4010; 0 = any free port)
  --host <host>              interface to bind (default 127.0.0.1; the /sandbox control routes are unauthenticated)
  --seed <n>                 seed of the fault probabilities
  --token-lifetime <s>       access token lifetime in seconds (default 3600)
  --no-demo                  start empty, without the demo merchant and tokens
  --webhook-url <url>        a webhook receiver of the demo merchant (repeat for several)
                             env PURCHASE_AUTH_SANDBOX_WEBHOOK_URLS (comma-separated)
  --webhook-secret <secret>  its signing secret (repeat during a rotation; default whsec-local-demo)
                             env PURCHASE_AUTH_SANDBOX_WEBHOOK_SECRET (comma-separated)
  --webhook-concurrency <n>  webhook deliveries in flight per receiver URL (default 16)
                             env PURCHASE_AUTH_SANDBOX_WEBHOOK_CONCURRENCY
  --log                      print one line per request
  --help                     show this text`;

export const ENV = {
  webhookUrls: "PURCHASE_AUTH_SANDBOX_WEBHOOK_URLS",
  webhookSecret: "PURCHASE_AUTH_SANDBOX_WEBHOOK_SECRET",
  webhookConcurrency: "PURCHASE_AUTH_SANDBOX_WEBHOOK_CONCURRENCY",
} as const;

export type CliCommand = { help: true } | { help: false; options: SandboxOptions };

/** Reads argv and the environment; throws an Error whose message is meant for the user. */
export function readCli(argv: string[], env: NodeJS.ProcessEnv): CliCommand {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      seed: { type: "string" },
      "token-lifetime": { type: "string" },
      "no-demo": { type: "boolean" },
      "webhook-url": { type: "string", multiple: true },
      "webhook-secret": { type: "string", multiple: true },
      "webhook-concurrency": { type: "string" },
      log: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return { help: true };

  const demo = !values["no-demo"];
  const urls = values["webhook-url"] ?? list(env[ENV.webhookUrls]);
  const secrets = values["webhook-secret"] ?? list(env[ENV.webhookSecret]);
  if (urls.length > 0 && !demo) {
    throw new Error("--webhook-url registers receivers of the demo merchant: it cannot go with --no-demo");
  }
  if (secrets.length > 0 && urls.length === 0) {
    throw new Error(`--webhook-secret needs --webhook-url (or ${ENV.webhookUrls})`);
  }
  const concurrency = whole(
    values["webhook-concurrency"] ?? env[ENV.webhookConcurrency],
    "webhook-concurrency",
    1,
  );
  const seed = whole(values.seed, "seed", 0);
  const tokenLifetime = whole(values["token-lifetime"], "token-lifetime", 1);

  return {
    help: false,
    options: {
      port: whole(values.port, "port", 0) ?? 4010,
      ...(values.host === undefined ? {} : { host: values.host }),
      ...(seed === undefined ? {} : { seed }),
      ...(tokenLifetime === undefined ? {} : { tokenLifetimeSeconds: tokenLifetime }),
      ...(concurrency === undefined ? {} : { webhookConcurrency: concurrency }),
      demo,
      ...(urls.length === 0 ? {} : { demoWebhooks: { urls, ...(secrets.length > 0 ? { secrets } : {}) } }),
      logRequests: values.log ?? false,
    },
  };
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

function whole(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < min) {
    throw new Error(`--${name} must be a whole number of at least ${min}, not "${value}"`);
  }
  return parsed;
}
