import type { MedusaContainer } from "@medusajs/framework/types";
import { createUserAccountWorkflow } from "@medusajs/medusa/core-flows";

/** The axios instance Medusa's test runner gives: requests to the running app. */
export interface Api {
  get<T = Record<string, unknown>>(url: string, config?: RequestConfig): Promise<{ status: number; data: T }>;
  post<T = Record<string, unknown>>(
    url: string,
    body?: unknown,
    config?: RequestConfig,
  ): Promise<{ status: number; data: T }>;
  delete<T = Record<string, unknown>>(
    url: string,
    config?: RequestConfig,
  ): Promise<{ status: number; data: T }>;
}

interface RequestConfig {
  headers?: Record<string, string>;
  validateStatus?: () => boolean;
}

/** Reads a claim from a JWT the app issued (no verification: the test only needs the id). */
function claim(token: string, name: string): string {
  const payload = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as Record<
    string,
    unknown
  >;
  return String(payload[name]);
}

/** Registers a customer through the store API and logs them in; returns their bearer headers. */
export async function registerCustomer(api: Api, publishableKey: string, email: string) {
  const password = "correct horse battery staple";
  const store = { "x-publishable-api-key": publishableKey };
  const registered = await api.post<{ token: string }>("/auth/customer/emailpass/register", {
    email,
    password,
  });
  const created = await api.post<{ customer: { id: string } }>(
    "/store/customers",
    { email, first_name: "Greta", last_name: "Garbo" },
    { headers: { ...store, authorization: `Bearer ${registered.data.token}` } },
  );
  const login = await api.post<{ token: string }>("/auth/customer/emailpass", { email, password });
  return {
    customerId: created.data.customer.id,
    headers: { ...store, authorization: `Bearer ${login.data.token}` },
  };
}

/** An admin user (as `medusa user` would create one), logged in; returns bearer headers. */
export async function loginAdmin(api: Api, container: MedusaContainer) {
  const email = "admin@example.com";
  const password = "another horse battery staple";
  const registered = await api.post<{ token: string }>("/auth/user/emailpass/register", { email, password });
  await createUserAccountWorkflow(container).run({
    input: { authIdentityId: claim(registered.data.token, "auth_identity_id"), userData: { email } },
  });
  const login = await api.post<{ token: string }>("/auth/user/emailpass", { email, password });
  return { authorization: `Bearer ${login.data.token}` };
}

/** Polls `check` until it returns a value (or the time is up). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("Timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
