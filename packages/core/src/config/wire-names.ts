// Every path, header name and event name of the supplement in one place. A deployment whose
// service differs overrides them in the client options instead of forking (supplement, preamble).

/** Request paths. `{orderId}` and `{customerToken}` are replaced with the encoded identifier. */
export const DEFAULT_PATHS = {
  token: "/oauth2/v2.0/token",
  authorizations: "/purchase/authorizations",
  order: "/manage/orders/{orderId}",
  captureOrder: "/manage/orders/{orderId}/capture",
  cancelOrder: "/manage/orders/{orderId}/cancel",
  refundOrder: "/manage/orders/{orderId}/refund",
  customerToken: "/purchase/customer-tokens/{customerToken}",
} as const;

export const DEFAULT_HEADERS = {
  idempotencyKey: "Service-Idempotency-Key",
  webhookId: "Service-Webhook-Id",
  webhookTimestamp: "Service-Webhook-Timestamp",
  webhookSignature: "Service-Webhook-Signature",
} as const;

/** Event type names as the service sends them, keyed by the names this library uses. */
export const DEFAULT_EVENT_TYPES = {
  "authorization.succeeded": "authorization.succeeded",
  "authorization.retrying": "authorization.retrying",
  "authorization.failed": "authorization.failed",
  "order.captured": "order.captured",
  "order.refunded": "order.refunded",
  "order.cancelled": "order.cancelled",
  "customer-token.status-changed": "customer-token.status-changed",
} as const;

export type ServicePaths = { [K in keyof typeof DEFAULT_PATHS]: string };
export type ServiceHeaders = { [K in keyof typeof DEFAULT_HEADERS]: string };
export type ServiceEventTypes = { [K in keyof typeof DEFAULT_EVENT_TYPES]: string };

/** Fills `{name}` placeholders with URI-encoded values. */
export function expandPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`Path ${template} needs a value for {${name}}`);
    return encodeURIComponent(value);
  });
}
