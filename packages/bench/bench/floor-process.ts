import { serveFloor } from "./child-rpc.js";
import { nodeHttpFloor } from "./floor-servers.js";

// Child-process entry: the node:http floor under the sandbox's create call (floor-servers.ts).

const server = nodeHttpFloor();
await serveFloor(server, () => server.closeAllConnections());
