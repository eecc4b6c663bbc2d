import type { AuthorizationRequestInput } from "../src/index.js";

export const TOKEN = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

/** A valid request; tests change one field at a time. */
export function validRequest(overrides: Partial<AuthorizationRequestInput> = {}): AuthorizationRequestInput {
  return {
    customerToken: TOKEN,
    order: {
      currency: "EUR",
      reference: "order-1",
      items: [
        { id: "sku-1", description: "Coffee beans 1 kg", unitPrice: "24.90", quantity: "2", vat: "14" },
      ],
    },
    ...overrides,
  };
}
