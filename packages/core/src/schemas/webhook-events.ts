import { z } from "zod";
import { captureModeSchema } from "./authorization-request.js";
import { currencyCodeSchema, guidSchema } from "./common.js";
import { customerTokenStatusSchema } from "./customer-tokens.js";
import { amountSchema, orderStatusSchema } from "./orders.js";

// Webhook events (supplement section C). Unknown event types are rejected by `webhookEventSchema`
// and reported by `verifyWebhook` as such, so a receiver can acknowledge and ignore them.

const base = { id: guidSchema, createdAt: z.string() };

const orderEventData = z.object({
  orderId: guidSchema,
  authorizationId: guidSchema,
  amount: amountSchema,
  currency: currencyCodeSchema,
  status: orderStatusSchema,
});

export const authorizationSucceededEventSchema = z.object({
  ...base,
  type: z.literal("authorization.succeeded"),
  data: z.object({
    authorizationId: guidSchema,
    orderId: guidSchema,
    customerToken: guidSchema,
    reference: z.string().optional(),
    actionReference: z.string().optional(),
    captureMode: captureModeSchema,
    amount: amountSchema,
    currency: currencyCodeSchema,
  }),
});

export const authorizationRetryingEventSchema = z.object({
  ...base,
  type: z.literal("authorization.retrying"),
  data: z.object({
    authorizationId: guidSchema,
    customerToken: guidSchema,
    reason: z.string(),
    attempt: z.number().int().positive(),
    maxAttempts: z.number().int().positive(),
    nextAttemptAt: z.string(),
  }),
});

export const authorizationFailedEventSchema = z.object({
  ...base,
  type: z.literal("authorization.failed"),
  data: z.object({
    authorizationId: guidSchema,
    customerToken: guidSchema,
    reference: z.string().optional(),
    actionReference: z.string().optional(),
    reason: z.string(),
    attempt: z.number().int().positive(),
  }),
});

export const orderCapturedEventSchema = z.object({
  ...base,
  type: z.literal("order.captured"),
  data: orderEventData,
});
export const orderRefundedEventSchema = z.object({
  ...base,
  type: z.literal("order.refunded"),
  data: orderEventData,
});
export const orderCancelledEventSchema = z.object({
  ...base,
  type: z.literal("order.cancelled"),
  data: orderEventData,
});

export const customerTokenStatusChangedEventSchema = z.object({
  ...base,
  type: z.literal("customer-token.status-changed"),
  data: z.object({
    customerToken: guidSchema,
    status: customerTokenStatusSchema,
    previousStatus: customerTokenStatusSchema,
  }),
});

export const webhookEventSchema = z.discriminatedUnion("type", [
  authorizationSucceededEventSchema,
  authorizationRetryingEventSchema,
  authorizationFailedEventSchema,
  orderCapturedEventSchema,
  orderRefundedEventSchema,
  orderCancelledEventSchema,
  customerTokenStatusChangedEventSchema,
]);

export type WebhookEvent = z.output<typeof webhookEventSchema>;
export type WebhookEventType = WebhookEvent["type"];
export type WebhookEventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;
