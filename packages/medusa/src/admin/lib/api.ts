// Requests from the widgets to the plugin's admin routes, as the logged-in admin user.

/**
 * The backend URL the dashboard was built with (`admin.backendUrl`), when the application's Vite
 * build defines it for extensions as it does for the dashboard; "/" (the dashboard's own origin,
 * Medusa's default) otherwise.
 */
declare const __BACKEND_URL__: string | undefined;

function backendUrl(): string {
  const url = typeof __BACKEND_URL__ === "string" && __BACKEND_URL__ !== "" ? __BACKEND_URL__ : "/";
  return url.endsWith("/") ? url.slice(0, -1) : url;
}

/** An error answer of the admin API, with Medusa's message (e.g. why a token was refused). */
export class AdminApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "AdminApiError";
  }
}

/**
 * Calls an admin route with the dashboard's session cookie (the dashboard's default
 * authentication), as Medusa's documentation has widgets do.
 */
export async function adminFetch<T>(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const response = await fetch(`${backendUrl()}${path}`, {
    method: init.method ?? "GET",
    credentials: "include",
    headers: { accept: "application/json", ...(init.body ? { "content-type": "application/json" } : {}) },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
  const body = (await response.json().catch(() => ({}))) as { message?: unknown };
  if (!response.ok) {
    const message = typeof body.message === "string" ? body.message : `HTTP ${response.status}`;
    throw new AdminApiError(message, response.status);
  }
  return body as T;
}
