// Row 6 (placeholder): the Express adapter's charge route against a bare Express route doing the
// same call. @purchase-auth/express does not exist yet, so there is nothing to measure.
// TODO(express): when packages/express exists, start an Express app with the adapter's charge route
// and one with a bare route calling the client, drive both with raw undici at c=16/64, and report
// adapter / bare (goal: close to 1).

export interface ExpressAdapterResult {
  status: "not measured yet";
  reason: string;
}

export function expressAdapterPlaceholder(): ExpressAdapterResult {
  return { status: "not measured yet", reason: "no @purchase-auth/express" };
}
