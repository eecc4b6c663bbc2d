import { readCli, USAGE } from "./cli/args.js";
import { startBanner } from "./cli/banner.js";
import { startSandbox } from "./server.js";

// purchase-auth-sandbox [--port 4010] [--host 127.0.0.1] [--webhook-url URL] … (see USAGE)

async function main(): Promise<void> {
  const command = readCli(process.argv.slice(2), process.env);
  if (command.help) {
    console.log(USAGE);
    return;
  }
  const sandbox = await startSandbox(command.options);
  console.log(startBanner(sandbox));

  const stop = () => {
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
