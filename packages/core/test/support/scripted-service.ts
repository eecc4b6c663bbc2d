import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A stand-in for the service whose every answer is scripted per attempt, for the outcome property
// test: it can commit or not, then answer with anything a network and a load balancer can produce.
// It is not a simulator (the sandbox is): it is the adversary.

export type ScriptedAnswer =
  | "success"
  | "timeout"
  | "reset"
  | "401"
  | "409"
  | "429"
  | "500"
  | "502"
  | "503"
  | "504"
  | "empty2xx"
  | "garbled2xx"
  | "400"
  | "422";

/** One attempt as scripted: whether the service commits the write, and what it answers. */
export interface ScriptedAttempt {
  commit: boolean;
  answer: ScriptedAnswer;
}

/** What the server saw and did for one key. */
export interface KeyRecord {
  /** Arrival times (performance.now()) of the create requests with this key. */
  arrivals: number[];
  /** The authorization id committed for the key, if any. */
  committedId?: string;
}

/** Answers that cannot come with a commit (the service stores nothing for them, or never ran). */
const NEVER_COMMITS: ReadonlySet<ScriptedAnswer> = new Set(["401", "429", "400", "422"]);
/** Answers that always come with a commit. */
const ALWAYS_COMMITS: ReadonlySet<ScriptedAnswer> = new Set(["success", "empty2xx", "garbled2xx"]);

/** Makes a scripted attempt consistent with what a real service can do. */
export function realistic(attempt: ScriptedAttempt): ScriptedAttempt {
  if (NEVER_COMMITS.has(attempt.answer)) return { ...attempt, commit: false };
  if (ALWAYS_COMMITS.has(attempt.answer)) return { ...attempt, commit: true };
  return attempt;
}

export class ScriptedService {
  readonly keys = new Map<string, KeyRecord>();
  /** When set, the token endpoint answers only after this long (a hanging identity provider). */
  tokenHangMs = 0;
  /** Token requests answered so far (a hanging one counts once its answer is written). */
  tokensAnswered = 0;
  /** Token requests received and not answered yet. */
  tokensPending = 0;
  #script: ScriptedAttempt[] = [];
  #server: Server;
  #hangMs: number;
  url = "";

  constructor(hangMs: number) {
    this.#hangMs = hangMs;
    this.#server = createServer((req, res) => this.#handle(req, res));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** The attempts of the next call, in order; attempts beyond the script succeed. */
  script(attempts: ScriptedAttempt[]): void {
    this.#script = attempts.map(realistic);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    req.on("end", () => {
      if (req.url?.endsWith("/token")) {
        const token = { token_type: "Bearer", expires_in: 3600, ext_expires_in: 3600, access_token: "t" };
        this.tokensPending++;
        setTimeout(() => {
          this.tokensPending--;
          this.tokensAnswered++;
          json(res, 200, token);
        }, this.tokenHangMs);
        return;
      }
      const key = String(req.headers["service-idempotency-key"]);
      const record = this.keys.get(key) ?? { arrivals: [] };
      this.keys.set(key, record);
      record.arrivals.push(performance.now());
      const attempt = this.#script.shift() ?? { commit: true, answer: "success" };
      if (attempt.commit) record.committedId ??= randomUUID();
      // A key already committed: a definite answer is its stored outcome, replayed (supplement D).
      const answer =
        record.committedId !== undefined && (attempt.answer === "400" || attempt.answer === "422")
          ? "success"
          : attempt.answer;
      this.#answer(res, answer, record.committedId);
    });
  }

  #answer(res: ServerResponse, answer: ScriptedAnswer, committedId: string | undefined): void {
    const envelope = (status: number, reason: string) =>
      json(res, status, {
        id: randomUUID(),
        error: { code: status, message: "x", errors: [{ reason, message: "x" }] },
      });
    switch (answer) {
      case "success":
        json(res, 202, { id: randomUUID(), data: { authorizationId: committedId } });
        return;
      case "timeout":
        setTimeout(() => res.destroy(), this.#hangMs);
        return;
      case "reset":
        res.socket?.destroy();
        return;
      case "401":
        res.writeHead(401).end();
        return;
      case "409":
        envelope(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS");
        return;
      case "429":
        res.writeHead(429, { "retry-after": "0" }).end();
        return;
      case "500":
      case "502":
      case "504":
        res.writeHead(Number(answer), { "content-type": "text/html" }).end("<html>gateway</html>");
        return;
      case "503":
        envelope(503, "SERVICE_UNAVAILABLE");
        return;
      case "empty2xx":
        res.writeHead(202).end();
        return;
      case "garbled2xx":
        json(res, 200, { id: randomUUID(), data: { authorizationId: "not-a-guid" } });
        return;
      case "400":
        envelope(400, "INVALID_REQUEST");
        return;
      case "422":
        envelope(422, "PAYMENT_DENIED");
        return;
    }
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
