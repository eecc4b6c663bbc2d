import { checkAuthorizationRequest } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { referenceValidate } from "../bench/reference-validator.js";

// The bench's hand-written reference validator (what core's validation is measured against) must
// judge as core does. Its item id and order reference limits counted UTF-16 units where core counts
// code points: the two disagreed on valid requests with emoji.

const body = (order: Record<string, unknown>, item: Record<string, unknown> = {}) => ({
  customerToken: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  order: {
    currency: "EUR",
    items: [{ id: "sku-1", description: "Tea", unitPrice: "10.00", quantity: "1", vat: "24", ...item }],
    ...order,
  },
});

function verdicts(input: unknown) {
  const core = checkAuthorizationRequest(structuredClone(input));
  let reference: unknown;
  try {
    reference = referenceValidate(structuredClone(input));
  } catch (error) {
    reference = (error as Error).message;
  }
  return { core: core.success ? core.request : core.issues, reference };
}

describe("reference validator and core agree on lengths counted in characters", () => {
  it.each([
    ["plain request (control)", body({})],
    ["description of 60 emoji (control)", body({}, { description: "😀".repeat(60) })],
    [
      "description with a lone surrogate at the cut (control)",
      body({}, { description: `${"d".repeat(49)}\uD83Dtail` }),
    ],
  ])("%s", (_name, input) => {
    const { core, reference } = verdicts(input);
    expect(reference).toEqual(core);
  });

  it.each([
    ["item id of 30 emoji", body({}, { id: "😀".repeat(30) })],
    ["order.reference of 30 emoji", body({ reference: "😀".repeat(30) })],
    ["order.settlementReference of 30 emoji", body({ settlementReference: "😀".repeat(30) })],
    ["order.actionReference of 200 emoji", body({ actionReference: "😀".repeat(200) })],
  ])("%s", (_name, input) => {
    const { core, reference } = verdicts(input);
    expect(reference).toEqual(core);
  });
});
