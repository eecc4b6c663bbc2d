import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigurationError, type Logger } from "@purchase-auth/core";
import { createStorefrontApp, type StorefrontApp } from "./app.js";
import { ConfigError, type StorefrontConfig, VARIABLE_OF_OPTION } from "./config.js";
import { type EmbeddedSandbox, startEmbeddedSandbox } from "./embedded-sandbox.js";
import type { PaymentsMode } from "./shop-context.js";

export interface RunningStorefront {
  /** Where the shop answers, e.g. http://127.0.0.1:3000. */
  url: string;
  /** Where the service must deliver webhooks. */
  webhookUrl: string;
  paymentsMode: PaymentsMode;
  /** Present when running on the embedded sandbox. */
  embedded?: EmbeddedSandbox;
  storefront: StorefrontApp;
  close(): Promise<void>;
}

/** Starts the payments side (the embedded sandbox unless a service is configured), then the shop. */
export async function startStorefront(
  config: StorefrontConfig,
  options: { logger?: Logger } = {},
): Promise<RunningStorefront> {
  const embedded = config.service ? undefined : await startEmbeddedSandbox();
  let storefront: StorefrontApp | undefined;
  let server: Server | undefined;
  try {
    storefront = createApp(config, embedded, options.logger);
    server = await listen(storefront, config);
  } catch (error) {
    await storefront?.close();
    await embedded?.sandbox.close();
    throw error;
  }

  const { port } = server.address() as AddressInfo;
  const url = `http://${urlHost(config.host)}:${port}`;
  const webhookUrl = `${url}/payments/webhooks`;
  // Only now that the shop listens: the sandbox delivers to it from here on.
  embedded?.registerWebhookUrl(webhookUrl);

  const app = storefront;
  const listening = server;
  let closing: Promise<void> | undefined;
  return {
    url,
    webhookUrl,
    paymentsMode: app.shop.paymentsMode,
    ...(embedded ? { embedded } : {}),
    storefront: app,
    close() {
      closing ??= (async () => {
        await app.close(); // ends live-update streams first, so the server can close
        await new Promise<void>((resolve) => {
          listening.close(() => resolve());
          listening.closeAllConnections();
        });
        await embedded?.sandbox.close();
      })();
      return closing;
    },
  };
}

function createApp(
  config: StorefrontConfig,
  embedded: EmbeddedSandbox | undefined,
  logger: Logger | undefined,
): StorefrontApp {
  const common = logger ? { logger } : {};
  if (embedded) {
    return createStorefrontApp({
      clientOptions: embedded.clientOptions,
      webhookSecret: embedded.webhookSecret,
      paymentsMode: { kind: "embedded-sandbox", url: embedded.sandbox.url },
      demoClock: embedded.clock,
      ...common,
    });
  }
  const service = config.service!;
  try {
    return createStorefrontApp({
      clientOptions: {
        baseUrl: service.baseUrl,
        ...(service.authUrl ? { authUrl: service.authUrl } : {}),
        clientId: service.clientId,
        clientSecret: service.clientSecret,
        scope: service.scope,
      },
      webhookSecret: service.webhookSecrets,
      paymentsMode: { kind: "service", url: service.baseUrl },
      ...common,
    });
  } catch (error) {
    // The middleware names the option (clientOptions.scope); say which variable that came from.
    if (ConfigurationError.isInstance(error)) {
      const variable = VARIABLE_OF_OPTION[error.option] ?? error.option;
      throw new ConfigError(variable, `${variable}: ${error.message}`);
    }
    throw error;
  }
}

function listen(storefront: StorefrontApp, config: StorefrontConfig): Promise<Server> {
  const server = createServer(storefront.app);
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") {
        reject(
          new ConfigError(
            "PORT",
            `Port ${config.port} on ${config.host} is already in use. Stop what uses it, or set PORT to another port (e.g. PORT=${config.port + 1}).`,
          ),
        );
      } else if (error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND") {
        reject(new ConfigError("HOST", `HOST ${config.host} is not an address of this machine.`));
      } else {
        reject(error);
      }
    });
    server.listen(config.port, config.host, () => resolve(server));
  });
}

/** The host part of the shop's URL: a wildcard address is reached at 127.0.0.1. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}
