import { describe, expect, it } from "vitest";
import { resolveProviderOptions } from "../src/providers/purchase-auth/options";
import { PurchaseAuthProviderService } from "../src/providers/purchase-auth/service";

const valid = {
  baseUrl: "https://api.example.com",
  clientId: "client",
  clientSecret: "s3cret-value",
  scope: "api://purchase/.default",
  webhookSecret: "whsec",
};

describe("provider options", () => {
  it("fills in the defaults", () => {
    const options = resolveProviderOptions(valid);
    expect(options).toMatchObject({
      captureMode: "Manual",
      attemptSchedule: "synchronous",
      webhookSecrets: ["whsec"],
      webhookToleranceSeconds: 604_800,
      defaultVatPercent: "0",
      orderLines: "cart",
      outcomeGraceMs: 86_400_000,
    });
  });

  it.each([
    [{ baseUrl: undefined }, /option baseUrl .*is required/],
    [{ baseUrl: "ftp://x" }, /option baseUrl/],
    [{ clientId: "" }, /option clientId .*is required/],
    [{ clientSecret: undefined }, /option clientSecret .*is required/],
    [{ scope: "api://purchase" }, /option scope .*<SCOPE_ID>\/.default/],
    [{ captureMode: "auto" }, /option captureMode .*"Manual" or "Auto"/],
    [{ attemptSchedule: "later" }, /option attemptSchedule/],
    [{ attemptSchedule: { relative: ["1 hour"] } }, /option attemptSchedule/],
    [{ webhookSecret: [] }, /option webhookSecret .*is required/],
    [{ defaultVatPercent: 101 }, /option defaultVatPercent/],
    [{ defaultVatPercent: "12.345" }, /option defaultVatPercent/],
    [{ orderLines: "none" }, /option orderLines/],
    [{ idempotencyNamespace: "not-a-guid" }, /option idempotencyNamespace .*GUID/],
    [{ outcomeGraceMs: 3_599_999 }, /option outcomeGraceMs .*from 3600000 to 2592000000/],
    [{ outcomeGraceMs: "1d" }, /option outcomeGraceMs/],
  ])("names the option in the error: %o", (change, message) => {
    expect(() => PurchaseAuthProviderService.validateOptions({ ...valid, ...change })).toThrow(message);
  });

  it("accepts the schedules and rotation lists", () => {
    expect(
      resolveProviderOptions({ ...valid, attemptSchedule: { relative: ["00.00:05:00", "00.01:00:00"] } })
        .attemptSchedule,
    ).toEqual({
      relative: ["00.00:05:00", "00.01:00:00"],
    });
    expect(resolveProviderOptions({ ...valid, webhookSecret: ["old", "new"] }).webhookSecrets).toEqual([
      "old",
      "new",
    ]);
  });

  it("never puts the client secret into an error message", () => {
    try {
      PurchaseAuthProviderService.validateOptions({ ...valid, scope: "bad" });
    } catch (error) {
      expect(String(error)).not.toContain(valid.clientSecret);
    }
  });
});
