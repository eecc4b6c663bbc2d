import { expect } from "vitest";

/** What a fetch answered, with the body read once. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON body, when there is one. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  json: any;
}

/**
 * A browser without a browser: keeps the session cookie, remembers the CSRF token of the last page,
 * and never follows redirects (tests look at them).
 */
export class ShopClient {
  cookie: string | undefined;
  csrfToken = "";

  constructor(readonly baseUrl: string) {}

  async get(path: string): Promise<Answer> {
    return this.#send(path, { method: "GET" });
  }

  /** Posts a url-encoded form, with the session's CSRF token unless `csrf` is false. */
  async postForm(path: string, fields: Record<string, string>, { csrf = true } = {}): Promise<Answer> {
    const body = new URLSearchParams({ ...(csrf ? { _csrf: this.csrfToken } : {}), ...fields });
    return this.#send(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    });
  }

  /** Posts JSON as the page scripts do, with the X-CSRF-Token header unless `csrf` is false. */
  async postJson(path: string, body: unknown, { csrf = true } = {}): Promise<Answer> {
    return this.#send(path, {
      method: "POST",
      headers: { "content-type": "application/json", ...(csrf ? { "x-csrf-token": this.csrfToken } : {}) },
      body: JSON.stringify(body),
    });
  }

  /** Loads a page so the session and its CSRF token are known. */
  async open(path = "/"): Promise<Answer> {
    const answer = await this.get(path);
    expect(answer.status).toBe(200);
    return answer;
  }

  async signIn(customerId: string): Promise<void> {
    await this.open("/sign-in");
    const answer = await this.postForm("/sign-in", { customerId, returnTo: "/" });
    expect(answer.status).toBe(303);
    await this.open("/"); // the renewed session's CSRF token
  }

  async addToCart(sku: string, quantity = 1): Promise<void> {
    const answer = await this.postForm("/cart/items", { sku, quantity: String(quantity) });
    expect(answer.status).toBe(303);
  }

  /** The id of the session's cart, as the checkout page gives it to its script. */
  async cartId(): Promise<string> {
    const page = await this.open("/checkout");
    const match = /data-cart-id="([^"]+)"/.exec(page.text);
    expect(match).not.toBeNull();
    return match![1]!;
  }

  async #send(path: string, init: RequestInit): Promise<Answer> {
    const headers = new Headers(init.headers);
    if (this.cookie) headers.set("cookie", this.cookie);
    const response = await fetch(new URL(path, this.baseUrl), { ...init, headers, redirect: "manual" });
    for (const setCookie of response.headers.getSetCookie()) {
      this.cookie = setCookie.split(";")[0];
    }
    const text = await response.text();
    const token = /<meta name="csrf-token" content="([^"]+)">/.exec(text);
    if (token) this.csrfToken = token[1]!;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }
}
