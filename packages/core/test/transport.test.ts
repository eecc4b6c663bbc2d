import { AsyncLocalStorage } from "node:async_hooks";
import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, type Dispatcher, MockAgent } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpRequest, sendOnce } from "../src/http/transport.js";

// sendOnce talks to the dispatcher's handler interface instead of `dispatcher.request`: these pin
// that it answers, fails, times out and aborts as `request` with an AbortController did.

type Route = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let origin = "";
let route: Route = (_req, res) => res.end("{}");
/** Requests that reached the server, by path. */
let arrived: string[] = [];
const agent = new Agent({ connections: 4 });

beforeAll(async () => {
  server = createServer((req, res) => {
    arrived.push(req.url ?? "");
    req.resume();
    req.on("end", () => route(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  arrived = [];
  route = (_req, res) => res.end("{}");
});
afterAll(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function attempt(overrides: Partial<HttpRequest> = {}): HttpRequest {
  return {
    method: "POST",
    origin,
    path: "/purchase/authorizations",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: "{}",
    timeoutMs: 10_000,
    ...overrides,
  };
}

/** The handler methods an undici before 7 calls (7 calls onRequestStart… when they exist). */
interface LegacyHandler {
  onConnect(abort: (error: Error) => void): void;
  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: null): void;
  onError(error: Error): void;
}

/** A dispatcher that drives its handler as undici 6 does: abort errors the request at once. */
function legacyDispatcher(answer: (handler: LegacyHandler) => void, aborts: unknown[] = []): Dispatcher {
  return {
    dispatch(_options: unknown, handler: LegacyHandler) {
      let ended = false;
      handler.onConnect((error) => {
        if (ended) return;
        ended = true;
        aborts.push(error);
        handler.onError(error);
      });
      answer(handler);
      return true;
    },
  } as unknown as Dispatcher;
}

describe("sendOnce", () => {
  it("reads the body as undici's body.text() does: chunks joined, UTF-8 split across them, a BOM dropped", async () => {
    const text = '{"name":"Crème brûlée ☕"}';
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")]);
    route = (_req, res) => {
      res.writeHead(201, { "content-type": "application/json", "x-twice": ["a", "b"] });
      // One byte at a time: every multi-byte character is split across chunks.
      let index = 0;
      const next = () => {
        if (index === bytes.length) return res.end();
        res.write(bytes.subarray(index, ++index));
        setImmediate(next);
      };
      next();
    };
    const ours = await sendOnce(agent, attempt());
    const theirs = await agent.request({ origin, path: "/", method: "GET" });
    expect(ours.status).toBe(201);
    expect(ours.body).toBe(text);
    expect(ours.body).toBe(await theirs.body.text());
    expect(ours.headers["content-type"]).toBe("application/json");
    expect(ours.headers["x-twice"]).toEqual(["a", "b"]);
  });

  it("an empty body is the empty string", async () => {
    route = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    expect(await sendOnce(agent, attempt())).toMatchObject({ status: 204, body: "" });
  });

  it("times out while the body is still coming, with a TimeoutError", async () => {
    route = (_req, res) => {
      res.writeHead(200);
      res.write('{"partial":'); // and never the rest
    };
    const error = await sendOnce(agent, attempt({ timeoutMs: 50 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe("TimeoutError");
  });

  it("the caller's abort ends an attempt waiting for its answer, with the caller's reason", async () => {
    const controller = new AbortController();
    route = () => controller.abort(new Error("stop")); // the request arrived; no answer ever
    const error = await sendOnce(agent, attempt({ signal: controller.signal })).catch((e: unknown) => e);
    expect((error as Error).message).toBe("stop");
    expect(arrived).toHaveLength(1);
  });

  it("a caller's signal that is already aborted sends nothing", async () => {
    const signal = AbortSignal.abort(new Error("before"));
    const error = await sendOnce(agent, attempt({ signal })).catch((e: unknown) => e);
    expect((error as Error).message).toBe("before");
    expect(arrived).toEqual([]);
  });

  it("removes its listener from the caller's signal when the attempt ends (a long-lived signal does not collect them)", async () => {
    const controller = new AbortController();
    for (let i = 0; i < 3; i++) await sendOnce(agent, attempt({ signal: controller.signal }));
    route = (_req, res) => {
      res.writeHead(503);
      res.end();
    };
    await sendOnce(agent, attempt({ signal: controller.signal }));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("an attempt that timed out while queued for a connection is never written", async () => {
    const single = new Agent({ connections: 1 });
    let release = (): void => undefined;
    route = (req, res) => {
      if (req.url === "/hang") release = () => res.end("{}");
      else res.end("{}");
    };
    try {
      const first = sendOnce(single, attempt({ path: "/hang" }));
      // Queued behind the first: its time runs out before the connection is free.
      const second = sendOnce(single, attempt({ path: "/queued", timeoutMs: 30 })).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 60));
      release();
      await first;
      const error = await second;
      expect((error as DOMException).name).toBe("TimeoutError");
      expect(arrived).toEqual(["/hang"]);
    } finally {
      await single.close();
    }
  });

  it("fails with the connection's error code when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await sendOnce(agent, attempt({ origin: `http://127.0.0.1:${port}` })).catch(
      (e: unknown) => e,
    );
    expect((error as { code?: string }).code).toBe("ECONNREFUSED");
  });

  it("works with undici's MockAgent, as applications' tests use it", async () => {
    const mock = new MockAgent();
    mock.disableNetConnect();
    mock
      .get("https://service.example")
      .intercept({ path: "/purchase/authorizations", method: "POST" })
      .reply(200, { ok: true }, { headers: { "content-type": "application/json" } });
    const response = await sendOnce(mock, attempt({ origin: "https://service.example" }));
    expect(response).toMatchObject({ status: 200, body: '{"ok":true}' });
    await mock.close();
  });

  it("works with a dispatcher of an older undici (Node's own), which calls onConnect, onHeaders, onData, onComplete", async () => {
    const older = legacyDispatcher((handler) => {
      handler.onHeaders(200, [Buffer.from("Content-Type"), Buffer.from("application/json")], () => {}, "OK");
      handler.onData(Buffer.from('{"ok":'));
      handler.onData(Buffer.from("true}"));
      handler.onComplete(null);
    });
    const response = await sendOnce(older, attempt({ origin: "https://service.example" }));
    expect(response).toMatchObject({ status: 200, body: '{"ok":true}' });
    expect(response.headers["content-type"]).toBe("application/json");
  });

  it("an answer that ends after only an informational (1xx) head fails, and keeps nothing for the next attempt", async () => {
    const informationalOnly = (body: string) =>
      legacyDispatcher((handler) => {
        handler.onHeaders(103, [], () => {}, "Early Hints");
        handler.onData(Buffer.from(body));
        handler.onComplete(null);
      });
    const first = await sendOnce(informationalOnly("SECRET-OF-CALL-ONE"), attempt()).catch((e: unknown) => e);
    expect((first as Error).message).toMatch(/without a final status/);
    const second = await sendOnce(informationalOnly(""), attempt()).catch((e: unknown) => e);
    expect((second as Error).message).toMatch(/without a final status/);
    const answered = legacyDispatcher((handler) => {
      handler.onHeaders(200, [], () => {}, "OK");
      handler.onComplete(null);
    });
    expect(await sendOnce(answered, attempt())).toMatchObject({ status: 200, body: "" });
  });

  it("a body that cannot be turned into text ends the attempt with that error instead of leaving it waiting", async () => {
    // What a body larger than the longest string does (RangeError: Invalid string length).
    class UndecodableChunk extends Uint8Array {
      override toString(): string {
        throw new RangeError("Invalid string length");
      }
    }
    const undecodable = legacyDispatcher((handler) => {
      handler.onHeaders(202, [], () => {}, "Accepted");
      handler.onData(new UndecodableChunk([123, 125]) as unknown as Buffer);
      handler.onComplete(null);
    });
    const error = await sendOnce(undecodable, attempt()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
  });

  it("times out through an older undici's abort function", async () => {
    const aborts: unknown[] = [];
    const older = legacyDispatcher(() => undefined, aborts); // never answers
    const error = await sendOnce(older, attempt({ timeoutMs: 20 })).catch((e: unknown) => e);
    expect((error as DOMException).name).toBe("TimeoutError");
    expect(aborts).toEqual([error]);
  });

  it("the caller's AsyncLocalStorage context carries on after the attempt", async () => {
    const storage = new AsyncLocalStorage<string>();
    const seen = await storage.run("request-42", async () => {
      await sendOnce(agent, attempt());
      return storage.getStore();
    });
    expect(seen).toBe("request-42");
  });
});
