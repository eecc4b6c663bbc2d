import { startupBanner } from "./banner.js";
import { ConfigError, loadConfig } from "./config.js";
import { startStorefront } from "./storefront.js";

// `pnpm start`: read the configuration, start the shop, print where it is and whom to sign in as.

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const running = await startStorefront(config, {
    // The middleware logs failed requests and refused webhooks here (never secrets).
    logger: { warn: console.warn, error: console.error },
  });
  console.log(startupBanner(running));

  const stop = () => {
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`Configuration error (${error.variable}): ${error.message}`);
  } else {
    console.error("The storefront could not start:", error instanceof Error ? error.message : error);
  }
  process.exit(1);
});
