import { createServer } from "node:http";
import { serveFloor } from "./child-rpc.js";
import { cannedAnswer } from "./wire.js";

// Child-process entry: the floor under the sandbox's create call. A bare node:http server that reads
// the request body and answers what the sandbox answers a synchronous create (200, the same JSON
// envelope and headers, a new id each time), doing nothing else: no validation, no state. Its CPU
// per request is what node:http itself costs; the sandbox cannot serve a create for less.

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = cannedAnswer(req.url ?? "");
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, [
      "content-type",
      "application/json; charset=utf-8",
      "content-length",
      String(Buffer.byteLength(body)),
    ]);
    res.end(body);
  });
});
await serveFloor(server, () => server.closeAllConnections());
