import fc from "fast-check";

// fast-check generators of create-authorization bodies IN WIRE FORM: amounts as decimal strings,
// currency codes upper case, schedule times as strings. Every body they make is valid by the
// specification (sections 2 and 8) and core's positive total.

export type WireBody = Record<string, unknown> & {
  customerToken: unknown;
  order: Record<string, unknown> & { items: Array<Record<string, unknown>> };
  attemptSchedule?: Record<string, unknown>;
};

const pad2 = (value: number) => String(value).padStart(2, "0");

/** Cents as a decimal string with 0, 1 or 2 decimals where that is exact ("12", "12.5", "12.50"). */
export function amountArb(minCents: number, maxCents: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.integer({ min: minCents, max: maxCents }), fc.integer({ min: 0, max: 2 }))
    .map(([cents, wanted]) => {
      const negative = cents < 0;
      const magnitude = Math.abs(cents);
      const whole = Math.floor(magnitude / 100);
      const fraction = pad2(magnitude % 100);
      const decimals = wanted === 0 && fraction === "00" ? 0 : wanted === 1 && fraction.endsWith("0") ? 1 : 2;
      const text = decimals === 0 ? `${whole}` : `${whole}.${fraction.slice(0, decimals)}`;
      return negative ? `-${text}` : text;
    });
}

/** Text that is not blank after trimming, optionally padded with white-space (trimmed on both sides). */
function textArb(
  maxLength: number,
  unit: "grapheme-ascii" | "grapheme" = "grapheme-ascii",
): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom("", " ", "\t "),
      fc.string({ unit, minLength: 1, maxLength }).filter((text) => text.trim().length > 0),
      fc.constantFrom("", " "),
    )
    .map(([before, text, after]) => `${before}${text}${after}`);
}

export const timespanArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.integer({ min: 0, max: 99 }),
    fc.integer({ min: 0, max: 23 }),
    fc.integer({ min: 0, max: 59 }),
    fc.integer({ min: 0, max: 59 }),
  )
  .map(([d, h, m, s]) => `${pad2(d)}.${pad2(h)}:${pad2(m)}:${pad2(s)}`);

/** `yyyy-MM-ddTHH:mm:ss±hh:mm` with an offset of at most 14 hours. */
export const timestampArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.date({
      min: new Date("2000-01-01T00:00:00Z"),
      max: new Date("2099-12-31T00:00:00Z"),
      noInvalidDate: true,
    }),
    fc.integer({ min: -14 * 60, max: 14 * 60 }),
  )
  .map(([date, offsetMinutes]) => {
    const local = new Date(date.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 19);
    const sign = offsetMinutes < 0 ? "-" : "+";
    const magnitude = Math.abs(offsetMinutes);
    return `${local}${sign}${pad2(Math.floor(magnitude / 60))}:${pad2(magnitude % 60)}`;
  });

export const itemArb = fc.record({
  id: textArb(50),
  description: textArb(80, "grapheme"), // longer than 50 is cut, not rejected
  unitPrice: amountArb(1, 10_000_000), // positive, so every order adds up to more than 0
  quantity: fc.integer({ min: 1, max: 99_999_999 }).map(String),
  vat: amountArb(0, 10_000),
});

const scheduleArb = fc.oneof(
  fc.constant({}),
  fc.boolean().map((preferSynchronous) => ({ preferSynchronous })),
  fc.array(timespanArb, { minLength: 1, maxLength: 3 }).map((relative) => ({ relative })),
  fc.array(timestampArb, { minLength: 1, maxLength: 3 }).map((absolute) => ({ absolute })),
);

/** A valid body; `customerToken` is the sandbox's Active token (sometimes upper case, sometimes unknown). */
export function validBodyArb(customerToken: string): fc.Arbitrary<WireBody> {
  return fc
    .record(
      {
        customerToken: fc.oneof(
          { arbitrary: fc.constant(customerToken), weight: 8 },
          { arbitrary: fc.constant(customerToken.toUpperCase()), weight: 1 },
          { arbitrary: fc.uuid(), weight: 1 }, // a well-formed token nobody owns: 404, still valid
        ),
        storeId: textArb(20),
        order: fc.record(
          {
            items: fc.array(itemArb, { minLength: 1, maxLength: 4 }),
            currency: fc.oneof(
              { arbitrary: fc.constant("EUR"), weight: 6 },
              { arbitrary: fc.constantFrom("SEK", "NOK", "DKK", "USD", "GBP", "JPY", "CHF"), weight: 1 },
            ),
            reference: fc.string({ maxLength: 50 }),
            actionReference: fc.string({ maxLength: 255 }),
            settlementReference: fc.string({ maxLength: 50 }),
            captureMode: fc.constantFrom("Auto", "Manual"),
          },
          { requiredKeys: ["items", "currency"] },
        ),
        attemptSchedule: scheduleArb,
      },
      { requiredKeys: ["customerToken", "order"] },
    )
    .map((body) => body as WireBody);
}
