import { describe, expect, it } from "vitest";
import {
  chooseToken,
  holdsToken,
  readAccountHolderData,
  withoutToken,
  withToken,
} from "../src/providers/purchase-auth/stored-tokens";
import { rawBodyOf } from "../src/providers/purchase-auth/webhook-body";

const EUR = {
  customer_token: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  currency: "EUR",
  added_at: "2026-01-01T00:00:00Z",
};
const SEK = {
  customer_token: "3f2504e0-4f89-11d3-9a0c-0305e82c3302",
  currency: "SEK",
  added_at: "2026-01-02T00:00:00Z",
};

describe("stored customer tokens", () => {
  it("keeps well-formed entries only, and adds and removes by token", () => {
    const data = readAccountHolderData({
      customer_id: "cus_1",
      customer_tokens: [EUR, { customer_token: "nope" }, null],
    });
    expect(data.customer_tokens).toEqual([EUR]);
    const both = withToken(data, SEK);
    expect(
      withToken(both, { ...SEK, customer_token: SEK.customer_token.toUpperCase() }).customer_tokens,
    ).toHaveLength(2);
    expect(holdsToken(both, SEK.customer_token.toUpperCase())).toBe(true);
    expect(withoutToken(both, EUR.customer_token).customer_tokens).toEqual([SEK]);
  });

  it("charges only a token stored for the customer, in the cart's currency by default", () => {
    const data = readAccountHolderData({ customer_tokens: [EUR, SEK] });
    expect(chooseToken(data, undefined, "eur")).toEqual(EUR);
    expect(chooseToken(data, SEK.customer_token, "eur")).toEqual(SEK);
    expect(() => chooseToken(data, "3f2504e0-4f89-11d3-9a0c-0305e82c3399", "eur")).toThrow(
      /not one of this customer's/,
    );
    expect(() => chooseToken(data, 42, "eur")).toThrow(/not one of this customer's/);
    expect(() => chooseToken(data, undefined, "usd")).toThrow(/no stored customer token for USD/);
    expect(() => chooseToken(undefined, EUR.customer_token, "eur")).toThrow(/logged-in customer/);
  });
});

describe("webhook raw body", () => {
  it("restores the bytes from every form Medusa's event bus hands over", () => {
    const bytes = Buffer.from('{"id":"x"}');
    expect(rawBodyOf(bytes)).toBe(bytes);
    expect(rawBodyOf('{"id":"x"}')).toBe('{"id":"x"}');
    expect(Buffer.from(rawBodyOf(JSON.parse(JSON.stringify(bytes))) as Uint8Array).equals(bytes)).toBe(true);
    expect(rawBodyOf(undefined)).toBe("");
  });
});
