import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { clientErrorListener, requestListener } from "./http/node-adapter.js";
import type { SandboxOptions } from "./options.js";
import { Simulator } from "./simulator.js";

/** The simulator served over HTTP on a real socket, with every control method of `Simulator`. */
export class SandboxServer extends Simulator {
  readonly #server: Server;
  #url = "";
  #closed: Promise<void> | undefined;

  private constructor(options: SandboxOptions) {
    super(options);
    this.#server = createServer(requestListener(this.options, (request) => this.serve(request)));
    this.#server.on("clientError", clientErrorListener);
  }

  /** Starts a simulator and listens on `host:port` (default 127.0.0.1, a free port). */
  static async start(options: SandboxOptions = {}): Promise<SandboxServer> {
    const sandbox = new SandboxServer(options);
    await sandbox.#listen();
    return sandbox;
  }

  /** Base URL of the service and of the token endpoint, e.g. http://127.0.0.1:54321. */
  get url(): string {
    return this.#url;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo | null)?.port ?? 0;
  }

  /** Stops listening, drops open connections and stops every timer and delivery. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.dispose();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closed;
  }

  #listen(): Promise<void> {
    const { host, port } = this.options;
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(port, host, () => {
        this.#server.off("error", reject);
        const address = this.#server.address() as AddressInfo;
        const hostPart = address.family === "IPv6" ? `[${address.address}]` : address.address;
        this.#url = `http://${hostPart}:${address.port}`;
        resolve();
      });
    });
  }
}

/** Starts the sandbox on a real socket. Call `close()` when done. */
export function startSandbox(options: SandboxOptions = {}): Promise<SandboxServer> {
  return SandboxServer.start(options);
}
