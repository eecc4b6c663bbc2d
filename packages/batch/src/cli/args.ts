import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { InputError } from "./csv.js";
import type { InputFormat } from "./input.js";
import { formatOf } from "./input.js";

export const USAGE = `Usage: purchase-auth-batch <charges.csv | charges.jsonl> --batch-id <id> [options]

Charges every line of the file once (merchant-initiated, with stored customer tokens). Run it again
with the same --batch-id to resume: nobody is charged twice, nobody is skipped.

  --batch-id <id>             the batch's identity: the same id resumes it (required)
  --format <csv|jsonl>        default from the file's extension (.csv, .jsonl, .ndjson)
  --base-url <url>            the service (env PURCHASE_AUTH_BASE_URL)
  --auth-url <url>            the token endpoint's host when it differs (env PURCHASE_AUTH_AUTH_URL)
  --client-id <id>            OAuth client id (env PURCHASE_AUTH_CLIENT_ID)
  --scope <scope>             OAuth scope (env PURCHASE_AUTH_SCOPE)
                              the client secret is read from env PURCHASE_AUTH_CLIENT_SECRET or
                              from --client-secret-file <path>, never from the command line
  --sandbox                   start an embedded sandbox and charge there (every customer token of the
                              file is created in it, Active); needs @purchase-auth/sandbox installed
  --postgres <url>            keep the batch state in PostgreSQL (resumable after a crash; env
                              PURCHASE_AUTH_BATCH_POSTGRES); default in memory (not resumable)
  --concurrency <n>           requests in flight at once (default 8)
  --rate <n>                  requests started per second at most (default unlimited)
  --retry-delays <ms,...>     delays before new attempts after a decline worth retrying
                              (PAYMENT_FAILED, SERVICE_UNAVAILABLE); default 60000,600000,3600000;
                              "none" = never retry
  --unknown-retry-delay <ms>  delay before resending an unknown outcome, same key (default 1000)
  --wait-up-to <ms>           wait at most this long for items due later before ending (default 60000)
  --max-retries <n>           retries of one call inside the client, same key (default 3)
  --json                      print the final report as JSON on stdout
  --quiet                     no progress on stderr
  --help                      show this text

Exit status: 0 every item final; 3 some items are open (unknown, scheduled) or need review: run
again with the same --batch-id; 2 bad usage or input (nothing was sent); 1 the run failed.`;

export interface CliOptions {
  file: string;
  format: InputFormat;
  batchId: string;
  sandbox: boolean;
  service?: { baseUrl: string; authUrl?: string; clientId: string; clientSecret: string; scope: string };
  postgresUrl?: string;
  concurrency?: number;
  ratePerSecond?: number;
  retryDelaysMs?: number[];
  unknownRetryDelayMs?: number;
  waitUpToMs?: number;
  maxRetries?: number;
  json: boolean;
  quiet: boolean;
}

/** The options, checked: an InputError names the option (or variable) to fix. Undefined = --help. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv): CliOptions | undefined {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new InputError(`${(error as Error).message}\nRun purchase-auth-batch --help for the options.`);
  }
  const { values, positionals } = parsed;
  if (values.help) return undefined;
  if (positionals.length !== 1) throw new InputError("give exactly one file of charges (CSV or JSON lines)");
  const file = positionals[0]!;
  const batchId = values["batch-id"];
  if (batchId === undefined || batchId.trim() === "" || batchId.length > 200) {
    throw new InputError("--batch-id is required: 1 to 200 characters (the same id resumes the batch)");
  }
  const options: CliOptions = {
    file,
    format: formatOf(file, values.format),
    batchId,
    sandbox: values.sandbox ?? false,
    json: values.json ?? false,
    quiet: values.quiet ?? false,
  };
  const postgresUrl = values.postgres ?? env.PURCHASE_AUTH_BATCH_POSTGRES;
  if (postgresUrl !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(postgresUrl))
      throw new InputError("--postgres must be a postgres:// URL");
    options.postgresUrl = postgresUrl;
  }
  if (!options.sandbox) options.service = serviceOf(values, env);
  setNumber(options, "concurrency", values.concurrency, "--concurrency", 1);
  setNumber(options, "ratePerSecond", values.rate, "--rate", 0, true);
  setNumber(options, "unknownRetryDelayMs", values["unknown-retry-delay"], "--unknown-retry-delay", 0);
  setNumber(options, "waitUpToMs", values["wait-up-to"], "--wait-up-to", 0);
  setNumber(options, "maxRetries", values["max-retries"], "--max-retries", 0);
  const delays = values["retry-delays"];
  if (delays !== undefined) {
    options.retryDelaysMs =
      delays === "none"
        ? []
        : delays.split(",").map((part) => {
            const ms = Number(part.trim());
            if (part.trim() === "" || !Number.isInteger(ms) || ms < 0) {
              throw new InputError(
                '--retry-delays must be whole milliseconds ≥ 0 separated by commas, or "none"',
              );
            }
            return ms;
          });
  }
  return options;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "batch-id": { type: "string" },
      format: { type: "string" },
      "base-url": { type: "string" },
      "auth-url": { type: "string" },
      "client-id": { type: "string" },
      "client-secret-file": { type: "string" },
      scope: { type: "string" },
      sandbox: { type: "boolean" },
      postgres: { type: "string" },
      concurrency: { type: "string" },
      rate: { type: "string" },
      "retry-delays": { type: "string" },
      "unknown-retry-delay": { type: "string" },
      "wait-up-to": { type: "string" },
      "max-retries": { type: "string" },
      json: { type: "boolean" },
      quiet: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
}

type Values = ReturnType<typeof parse>["values"];

function serviceOf(values: Values, env: NodeJS.ProcessEnv): NonNullable<CliOptions["service"]> {
  const baseUrl = values["base-url"] ?? env.PURCHASE_AUTH_BASE_URL;
  const clientId = values["client-id"] ?? env.PURCHASE_AUTH_CLIENT_ID;
  const scope = values.scope ?? env.PURCHASE_AUTH_SCOPE;
  const authUrl = values["auth-url"] ?? env.PURCHASE_AUTH_AUTH_URL;
  let clientSecret = env.PURCHASE_AUTH_CLIENT_SECRET;
  const secretFile = values["client-secret-file"];
  if (secretFile !== undefined) {
    try {
      clientSecret = readFileSync(secretFile, "utf8").trim();
    } catch (error) {
      throw new InputError(
        `--client-secret-file: cannot read it (${(error as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  }
  const missing = [
    baseUrl === undefined ? "--base-url (or PURCHASE_AUTH_BASE_URL)" : undefined,
    clientId === undefined ? "--client-id (or PURCHASE_AUTH_CLIENT_ID)" : undefined,
    clientSecret === undefined || clientSecret === ""
      ? "PURCHASE_AUTH_CLIENT_SECRET (or --client-secret-file)"
      : undefined,
    scope === undefined ? "--scope (or PURCHASE_AUTH_SCOPE)" : undefined,
  ].filter((name) => name !== undefined);
  if (missing.length > 0) {
    throw new InputError(`the service's credentials are missing: ${missing.join(", ")}; or pass --sandbox`);
  }
  for (const [name, url] of [
    ["--base-url", baseUrl],
    ["--auth-url", authUrl],
  ] as const) {
    if (url !== undefined && !URL.canParse(url)) throw new InputError(`${name} must be a URL`);
  }
  return {
    baseUrl: baseUrl!,
    clientId: clientId!,
    clientSecret: clientSecret!,
    scope: scope!,
    ...(authUrl === undefined ? {} : { authUrl }),
  };
}

function setNumber<
  K extends "concurrency" | "ratePerSecond" | "unknownRetryDelayMs" | "waitUpToMs" | "maxRetries",
>(options: CliOptions, key: K, raw: string | undefined, name: string, min: number, fractional = false): void {
  if (raw === undefined) return;
  const value = Number(raw);
  const ok = raw.trim() !== "" && Number.isFinite(value) && (fractional ? value > min : value >= min);
  if (!ok || (!fractional && !Number.isInteger(value))) {
    throw new InputError(
      `${name} must be ${fractional ? "a number above" : "a whole number ≥"} ${min} (got ${JSON.stringify(raw)})`,
    );
  }
  options[key] = value;
}
