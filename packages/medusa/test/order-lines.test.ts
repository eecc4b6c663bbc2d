import { describe, expect, it } from "vitest";
import {
  itemsForAuthorization,
  orderLinesFromCart,
  totalCentsOf,
} from "../src/providers/purchase-auth/order-lines";

const single = { id: "cart_1", description: "Order of cart cart_1", vat: "25" };

describe("order lines", () => {
  it("turns items and shipping into lines with their VAT that add up to the cart's total", () => {
    const lines = orderLinesFromCart({
      items: [
        {
          id: "cali_1",
          title: "Medium roast",
          product_title: "Coffee beans 1 kg",
          variant_sku: "COFFEE-1KG",
          quantity: 3,
          total: 74.7,
          tax_lines: [{ rate: 25 }],
        },
        {
          id: "cali_2",
          title: "Book",
          quantity: 1,
          total: { value: "19.9", precision: 20 },
          tax_lines: [{ rate: 6 }],
        },
      ],
      shipping_methods: [{ id: "casm_1", name: "Standard", total: "4.90", tax_lines: [{ rate: 25 }] }],
    });
    expect(lines).toEqual([
      { id: "COFFEE-1KG", description: "Coffee beans 1 kg", unitPrice: "24.90", quantity: 3, vat: "25.00" },
      { id: "cali_2", description: "Book", unitPrice: "19.90", quantity: 1, vat: "6.00" },
      { id: "casm_1", description: "Standard", unitPrice: "4.90", quantity: 1, vat: "25.00" },
    ]);
    expect(totalCentsOf(lines!)).toBe(9950n);
  });

  it("splits a line whose total does not divide by its quantity, keeping the sum exact", () => {
    const lines = orderLinesFromCart({
      items: [{ id: "cali_1", title: "Pen", quantity: 3, total: 10, tax_lines: [] }],
    });
    expect(lines).toEqual([
      { id: "cali_1", description: "Pen", unitPrice: "3.33", quantity: 2, vat: "0.00" },
      { id: "cali_1", description: "Pen", unitPrice: "3.34", quantity: 1, vat: "0.00" },
    ]);
    expect(totalCentsOf(lines!)).toBe(1000n);
  });

  it("gives up on what the service cannot express", () => {
    expect(orderLinesFromCart({ items: [{ id: "a", quantity: 0, total: 1 }] })).toBeUndefined();
    expect(orderLinesFromCart({ items: [{ id: "a", quantity: 1, total: -1 }] })).toBeUndefined();
    expect(
      orderLinesFromCart({
        items: [{ id: "a", quantity: 1, total: 1, tax_lines: [{ rate: 60 }, { rate: 60 }] }],
      }),
    ).toBeUndefined();
    expect(orderLinesFromCart({ items: [{ id: "a", quantity: 1, total: undefined }] })).toBeUndefined();
    expect(orderLinesFromCart({ items: [] })).toBeUndefined();
  });

  it("sends the cart's lines only when they add up to the authorized amount to the cent", () => {
    const lines = orderLinesFromCart({
      items: [{ id: "a", title: "A", quantity: 2, total: 10, tax_lines: [{ rate: 25 }] }],
    })!;
    expect(itemsForAuthorization(lines, "10.00", single)).toEqual({ lines, fromCart: true });
    // Anything else (credit lines, a partial payment, a changed cart): one line for the amount.
    expect(itemsForAuthorization(lines, "9.99", single)).toEqual({
      lines: [
        { id: "cart_1", description: "Order of cart cart_1", unitPrice: "9.99", quantity: 1, vat: "25" },
      ],
      fromCart: false,
    });
    expect(itemsForAuthorization(null, "9.99", single).fromCart).toBe(false);
  });
});
