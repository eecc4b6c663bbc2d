import { spawn } from "node:child_process";
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, request } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve } from "node:path";

// The real Medusa admin dashboard for the tests. Medusa's test runner forces `admin.disable` (its
// configLoaderOverride), so the application it starts never serves /app. The dashboard is built as a
// merchant builds it for separate hosting (`medusa build --admin-only`, into .medusa/admin, with the
// plugin's admin extensions from its package export "./admin"), then served here at /app on one
// origin with the API, as Medusa itself serves it: static files, index.html for every other path, and
// every other request passed through to the running application.

const appDir = process.cwd();
const adminDir = join(appDir, ".medusa", "admin");

/** The plugin's built admin extensions, whose bundle the dashboard build includes. */
function pluginAdminBundle(): string {
  const require = createRequire(join(appDir, "package.json"));
  return require.resolve("@purchase-auth/medusa/admin");
}

/**
 * Builds the dashboard unless a build newer than the plugin's admin bundle exists (about two minutes
 * on two cores). Returns the build's folder.
 */
export async function ensureDashboardBuild(): Promise<string> {
  const index = join(adminDir, "index.html");
  if (existsSync(index) && statSync(index).mtimeMs > statSync(pluginAdminBundle()).mtimeMs) return adminDir;
  await new Promise<void>((done, fail) => {
    const output: string[] = [];
    const child = spawn("pnpm", ["exec", "medusa", "build", "--admin-only"], {
      cwd: appDir,
      // The dashboard talks to its own origin ("/"), where serveDashboard passes the API through.
      env: { ...process.env, NODE_ENV: "production", MEDUSA_BACKEND_URL: "/" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.on("error", fail);
    child.on("exit", (code) =>
      code === 0 && existsSync(index)
        ? done()
        : fail(new Error(`medusa build --admin-only failed (${code}):\n${output.join("").slice(-4000)}`)),
    );
  });
  return adminDir;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".ttf": "font/ttf",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
};

/** Serves the built dashboard at /app and passes everything else to `apiUrl`. */
export async function serveDashboard(buildDir: string, apiUrl: string) {
  const api = new URL(apiUrl);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://dashboard");
    if (url.pathname === "/app" || url.pathname.startsWith("/app/")) {
      const relative = normalize(decodeURIComponent(url.pathname.slice("/app".length)) || "/");
      const file = resolve(buildDir, `.${relative}`);
      const isAsset =
        file.startsWith(buildDir) && relative !== "/" && existsSync(file) && statSync(file).isFile();
      const path = isAsset ? file : join(buildDir, "index.html");
      res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" });
      createReadStream(path).pipe(res);
      return;
    }
    const upstream = request(
      {
        host: api.hostname,
        port: api.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: api.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) => {
      res.writeHead(502, { "content-type": "text/plain" }).end(error.message);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
