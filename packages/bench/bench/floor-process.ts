import { serveFloor } from "./child-rpc.js";
import { nodeHttpFloor } from "./floor-servers.js";

// Child-process entry: the node:http floor under the sandbox's create call (floor-servers.ts).
// `--busy-us=N`: the floor computes N µs per request before answering.

const busyArg = process.argv.find((arg) => arg.startsWith("--busy-us="))?.slice("--busy-us=".length);
const busyMicros = busyArg === undefined ? 0 : Number(busyArg);
// A figure that is not a duration would serve as the plain floor while the account records it as busy.
if (!Number.isFinite(busyMicros) || busyMicros < 0) throw new Error(`--busy-us=${busyArg}: not µs`);
const server = nodeHttpFloor(busyMicros);
await serveFloor(server, () => server.closeAllConnections());
