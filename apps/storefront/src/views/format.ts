import type { CaptureMode } from "@purchase-auth/core";
import type { Timing } from "@purchase-auth/express";
import { formatMoney } from "../shop/money.js";

export { formatMoney };

const DATE_TIME = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short" });

export function formatDateTime(date: Date): string {
  return DATE_TIME.format(date);
}

export function captureModeLabel(mode: CaptureMode): string {
  return mode === "Auto"
    ? "Charged at once (auto capture)"
    : "Reserved, charged when shipped (manual capture)";
}

export function timingLabel(timing: Timing): string {
  switch (timing) {
    case "now":
      return "Now";
    case "asap":
      return "As soon as possible";
    case "scheduled":
      return "On a schedule";
  }
}
