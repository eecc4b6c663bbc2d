import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One delivery the service made, as it came: its type, raw body and signature headers. */
export interface HeldWebhook {
  type: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * A webhook receiver that keeps every delivery (answering 204), so a test can keep the service's
 * events from Medusa and deliver one later, or never.
 */
export async function holdWebhooks() {
  const received: HeldWebhook[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers: Record<string, string> = {};
      for (const name of ["service-webhook-id", "service-webhook-timestamp", "service-webhook-signature"]) {
        const value = request.headers[name];
        if (typeof value === "string") headers[name] = value;
      }
      received.push({ type: (JSON.parse(body) as { type: string }).type, body, headers });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/held`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
