// Configuration from environment variables, validated once at start-up. With none of the
// PURCHASE_AUTH_* variables the shop runs on the embedded sandbox; with them it talks to that
// service instead, and then they are all required (a half-configured shop would fail at checkout).

export interface ServiceConfig {
  baseUrl: string;
  /** The token endpoint's host, when it differs from baseUrl. */
  authUrl?: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  /** Several during a rotation (comma-separated in the variable). */
  webhookSecrets: string[];
}

export interface StorefrontConfig {
  host: string;
  port: number;
  /** Undefined: the embedded sandbox. */
  service?: ServiceConfig;
}

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 3000;

/** Required together to use an external service. */
export const SERVICE_VARIABLES = [
  "PURCHASE_AUTH_BASE_URL",
  "PURCHASE_AUTH_CLIENT_ID",
  "PURCHASE_AUTH_CLIENT_SECRET",
  "PURCHASE_AUTH_SCOPE",
  "PURCHASE_AUTH_WEBHOOK_SECRET",
] as const;

/** Optional, and only together with the variables above. */
export const OPTIONAL_SERVICE_VARIABLES = ["PURCHASE_AUTH_AUTH_URL"] as const;

/** A configuration problem; `variable` names the environment variable to fix. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = "ConfigError";
  }
}

type Env = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: Env = process.env): StorefrontConfig {
  const value = (name: string) => {
    const raw = env[name]?.trim();
    return raw === "" ? undefined : raw;
  };
  const port = parsePort(value("PORT"));
  const host = value("HOST") ?? DEFAULT_HOST;

  const given = [...SERVICE_VARIABLES, ...OPTIONAL_SERVICE_VARIABLES].filter(
    (name) => value(name) !== undefined,
  );
  if (given.length === 0) return { host, port };

  const missing = SERVICE_VARIABLES.filter((name) => value(name) === undefined);
  if (missing.length > 0) {
    throw new ConfigError(
      missing[0]!,
      `${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set, but ${given.join(", ")} ${
        given.length === 1 ? "is" : "are"
      }. To use your own Purchase Authorization Service, set all of ${SERVICE_VARIABLES.join(", ")} ` +
        "(and PURCHASE_AUTH_AUTH_URL if its token endpoint is on another host). To use the embedded sandbox, set none of them.",
    );
  }
  const authUrl = value("PURCHASE_AUTH_AUTH_URL");
  const webhookSecrets = value("PURCHASE_AUTH_WEBHOOK_SECRET")!
    .split(",")
    .map((secret) => secret.trim())
    .filter((secret) => secret !== "");
  if (webhookSecrets.length === 0) {
    throw new ConfigError("PURCHASE_AUTH_WEBHOOK_SECRET", "PURCHASE_AUTH_WEBHOOK_SECRET holds no secret.");
  }
  return {
    host,
    port,
    service: {
      baseUrl: parseUrl("PURCHASE_AUTH_BASE_URL", value("PURCHASE_AUTH_BASE_URL")!),
      ...(authUrl === undefined ? {} : { authUrl: parseUrl("PURCHASE_AUTH_AUTH_URL", authUrl) }),
      clientId: value("PURCHASE_AUTH_CLIENT_ID")!,
      clientSecret: value("PURCHASE_AUTH_CLIENT_SECRET")!,
      scope: parseScope(value("PURCHASE_AUTH_SCOPE")!),
      webhookSecrets,
    },
  };
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PORT;
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65_535)) {
    throw new ConfigError(
      "PORT",
      `PORT must be a port number from 0 to 65535 (0 picks a free one), not "${text}".`,
    );
  }
  return port;
}

function parseUrl(variable: string, text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(
      variable,
      `${variable} must be a URL such as https://api.example.com, not "${text}".`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(variable, `${variable} must be an http:// or https:// URL, not "${text}".`);
  }
  return text;
}

function parseScope(text: string): string {
  if (!/^\S+\/\.default$/.test(text)) {
    throw new ConfigError(
      "PURCHASE_AUTH_SCOPE",
      `PURCHASE_AUTH_SCOPE must have the form <SCOPE_ID>/.default, e.g. api://purchase-auth-sandbox/.default, not "${text}".`,
    );
  }
  return text;
}

/** Core's option names, as the environment variables they come from (for start-up errors). */
export const VARIABLE_OF_OPTION: Readonly<Record<string, string>> = {
  "clientOptions.baseUrl": "PURCHASE_AUTH_BASE_URL",
  "clientOptions.authUrl": "PURCHASE_AUTH_AUTH_URL",
  "clientOptions.clientId": "PURCHASE_AUTH_CLIENT_ID",
  "clientOptions.clientSecret": "PURCHASE_AUTH_CLIENT_SECRET",
  "clientOptions.scope": "PURCHASE_AUTH_SCOPE",
  webhookSecret: "PURCHASE_AUTH_WEBHOOK_SECRET",
};
