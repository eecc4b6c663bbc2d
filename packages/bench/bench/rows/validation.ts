import { validateAuthorizationRequest } from "@purchase-auth/core";
import { median, opsPerSecondOf, rotate } from "../measure.js";
import { referenceValidate } from "../reference-validator.js";
import { authorizationBody } from "../wire.js";

// Row 3: validation + serialisation of one request, in process (no network): core's schemas
// against the hand-written reference validator.

export interface ValidationCell {
  items: number;
  coreOpsPerSec: number;
  referenceOpsPerSec: number;
  /** core / reference: 1 means as fast as hand-written code. */
  ratio: number;
}

const CUSTOMER_TOKEN = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

export function measureValidation(settings: {
  sizes: ReadonlyArray<{ items: number; iterations: number }>;
  rounds: number;
}): ValidationCell[] {
  assertReferenceRejects();
  return settings.sizes.map(({ items, iterations }) => {
    const body = authorizationBody(CUSTOMER_TOKEN, items);
    const core = () => JSON.stringify(validateAuthorizationRequest(body));
    const reference = () => JSON.stringify(referenceValidate(body));
    if (core() !== reference())
      throw new Error(`core and the reference serialise ${items} items differently`);
    const contenders = [
      { name: "core", run: core, results: [] as number[] },
      { name: "reference", run: reference, results: [] as number[] },
    ];
    for (const contender of contenders) opsPerSecondOf(contender.run, Math.ceil(iterations / 4)); // warm-up
    for (let round = 0; round < settings.rounds; round++) {
      for (const contender of rotate(contenders, round))
        contender.results.push(opsPerSecondOf(contender.run, iterations));
    }
    const coreOpsPerSec = median(contenders[0]!.results);
    const referenceOpsPerSec = median(contenders[1]!.results);
    return { items, coreOpsPerSec, referenceOpsPerSec, ratio: coreOpsPerSec / referenceOpsPerSec };
  });
}

/** A reference that accepted everything would be fast and meaningless: check it rejects. */
function assertReferenceRejects(): void {
  const valid = authorizationBody(CUSTOMER_TOKEN, 2);
  const broken: unknown[] = [
    { ...valid, customerToken: "not-a-guid" },
    { ...valid, order: { ...valid.order, currency: "EURO" } },
    { ...valid, order: { ...valid.order, items: [] } },
    { ...valid, order: { ...valid.order, items: [{ ...valid.order.items[0]!, vat: "100.01" }] } },
    { ...valid, order: { ...valid.order, items: [{ ...valid.order.items[0]!, quantity: "100000000" }] } },
    { ...valid, order: { ...valid.order, items: [{ ...valid.order.items[0]!, unitPrice: "1.234" }] } },
    { ...valid, order: { ...valid.order, reference: "r".repeat(51) } },
    { ...valid, attemptSchedule: { preferSynchronous: true, relative: ["00.01:00:00"] } },
    { ...valid, attemptSchedule: { absolute: ["2026-02-30T10:00:00+01:00"] } },
  ];
  for (const body of broken) {
    let rejected = false;
    try {
      referenceValidate(body);
    } catch {
      rejected = true;
    }
    if (!rejected) throw new Error(`the reference validator accepted ${JSON.stringify(body).slice(0, 200)}`);
  }
}
