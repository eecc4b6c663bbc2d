import { BatchFatalError } from "../engine/classify.js";
import { parseCli, USAGE } from "./args.js";
import { InputError } from "./csv.js";
import { needsAnotherRun, reportText } from "./report.js";
import { runCli } from "./run.js";

// purchase-auth-batch: see USAGE (src/cli/args.ts) and the README.

async function main(): Promise<number> {
  let options: ReturnType<typeof parseCli>;
  try {
    options = parseCli(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof InputError) {
      process.stderr.write(`purchase-auth-batch: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (options === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }

  // The first SIGINT/SIGTERM stops sending; calls in flight end as unknown and a re-run resends them.
  const stop = new AbortController();
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(130);
    process.stderr.write(
      "\npurchase-auth-batch: stopping (calls in flight finish as unknown; run again to resume)\n",
    );
    stop.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  try {
    const result = await runCli(options, stop.signal);
    process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${reportText(result)}\n`);
    if (needsAnotherRun(result) && options.postgresUrl === undefined && !options.sandbox) {
      // The keys are derived, so a re-run soon is answered by the service; but its state is gone.
      process.stderr.write(
        "purchase-auth-batch: the state of this run was in memory. Re-run within the hour with the same --batch-id, or use --postgres next time: after 24 h the service forgets the keys and a re-run would charge again.\n",
      );
    }
    return needsAnotherRun(result) ? 3 : 0;
  } catch (error) {
    if (error instanceof InputError) {
      process.stderr.write(`purchase-auth-batch: ${error.message}\n`);
      return 2;
    }
    const message =
      error instanceof BatchFatalError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`purchase-auth-batch: ${message}\n`);
    return 1;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`purchase-auth-batch: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
