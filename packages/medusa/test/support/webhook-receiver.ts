import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One webhook delivery as it arrived: the exact body bytes and the headers. */
export interface ReceivedWebhook {
  rawBody: Buffer;
  headers: IncomingHttpHeaders;
  type: string;
}

/** A local HTTP endpoint the sandbox delivers webhooks to; answers 204 and keeps every delivery. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  ofType(type: string): ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const rawBody = Buffer.concat(chunks);
      const type = (JSON.parse(rawBody.toString("utf8")) as { type: string }).type;
      received.push({ rawBody, headers: request.headers, type });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    ofType: (type) => received.filter((delivery) => delivery.type === type),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
