import { serveFloor } from "./child-rpc.js";
import { nodeHttpFloor } from "./floor-servers.js";

// Child-process entry: the node:http floor under the sandbox's create call (floor-servers.ts).
// `--busy-us=N`: the floor computes N µs per request before answering.

const busy = process.argv.find((arg) => arg.startsWith("--busy-us="))?.slice("--busy-us=".length);
const server = nodeHttpFloor(busy === undefined ? 0 : Number(busy));
await serveFloor(server, () => server.closeAllConnections());
