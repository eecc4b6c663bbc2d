import type { AddressInfo } from "node:net";
import { MemoryChargeStore } from "@purchase-auth/express";
import express from "express";
import { afterAll, beforeAll, expect, it } from "vitest";
import { errorPage, notFoundPage } from "../src/http/errors.js";
import { SessionStore, sessions } from "../src/http/sessions.js";
import { CartBook } from "../src/shop/carts.js";

// The last-resort error page, behind a route that fails the way real code fails: with an error whose
// message holds internal text.

const logged: unknown[] = [];
let server: ReturnType<express.Express["listen"]>;
let baseUrl: string;

beforeAll(async () => {
  const source = {
    carts: new CartBook(),
    charges: new MemoryChargeStore(),
    paymentsMode: { kind: "embedded-sandbox", url: "http://127.0.0.1:1" } as const,
  };
  const app = express();
  app.use(sessions(new SessionStore()));
  app.get("/boom", () => {
    throw new Error("connect ECONNREFUSED db.internal:5432 password=hunter2");
  });
  app.get("/async-boom", async () => {
    await Promise.resolve();
    throw new TypeError("Cannot read properties of undefined (reading 'lines')");
  });
  app.use(notFoundPage(source));
  app.use(errorPage(source, { error: (message, meta) => logged.push({ message, meta }) }));
  await new Promise<void>((resolve) => {
    server = app.listen(0, "127.0.0.1", () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it.each(["/boom", "/async-boom"])(
  "answers %s with an apology page that says nothing of the cause",
  async (path) => {
    const response = await fetch(baseUrl + path);
    const text = await response.text();
    expect(response.status).toBe(500);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(text).toContain("Something went wrong on our side.");
    expect(text).not.toMatch(/hunter2|ECONNREFUSED|TypeError|reading 'lines'|\.ts:\d+/);
  },
);

it("logs the cause for the developer instead", () => {
  expect(JSON.stringify(logged)).toContain("hunter2");
});
