import { z } from "zod";
import { captureModeSchema } from "./authorization-request.js";
import { currencyCodeSchema, decimalStringSchema, guidSchema } from "./common.js";

// Order resource and its write operations (supplement section A).

export const orderStatusSchema = z.enum([
  "NotActivated",
  "PartActivated",
  "Activated",
  "PartReturned",
  "Returned",
  "Cancelled",
  "Expired",
]);

/** An amount on the wire: a decimal string with at most 2 decimals. */
export const amountSchema = decimalStringSchema({ maxDecimals: 2 });

/** A positive amount for capture and refund. */
export const positiveAmountSchema = decimalStringSchema({ maxDecimals: 2, min: 0.01 });

export const orderItemSchema = z.object({
  id: z.string(),
  description: z.string(),
  unitPrice: z.string(),
  quantity: z.string(),
  vat: z.string(),
});

export const orderSchema = z.object({
  orderId: guidSchema,
  authorizationId: guidSchema,
  customerToken: guidSchema,
  storeId: z.string(),
  reference: z.string().optional(),
  currency: currencyCodeSchema,
  status: orderStatusSchema,
  totalAmount: amountSchema,
  capturedAmount: amountSchema,
  refundedAmount: amountSchema,
  cancelledAmount: amountSchema,
  captureMode: captureModeSchema,
  createdAt: z.string(),
  items: z.array(orderItemSchema),
});

export const captureRequestSchema = z.object({
  amount: positiveAmountSchema.optional(),
  actionReference: z.string().max(255).optional(),
  description: z.string().max(255).optional(),
});

export const cancelRequestSchema = z.object({
  actionReference: z.string().max(255).optional(),
});

export const refundRequestSchema = z.object({
  amount: positiveAmountSchema,
  actionReference: z.string().max(255).optional(),
  description: z.string().max(255).optional(),
});

export type OrderStatus = z.output<typeof orderStatusSchema>;
export type Order = z.output<typeof orderSchema>;
export type CaptureRequest = z.output<typeof captureRequestSchema>;
export type CancelRequest = z.output<typeof cancelRequestSchema>;
export type RefundRequest = z.output<typeof refundRequestSchema>;
