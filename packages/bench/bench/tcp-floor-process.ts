import { serveFloor } from "./child-rpc.js";
import { tcpFloor } from "./floor-servers.js";

// Child-process entry: the TCP floor under node:http (floor-servers.ts).

const { server, endConnections } = tcpFloor();
await serveFloor(server, endConnections);
