import { defineWidgetConfig } from "@medusajs/admin-sdk";
import type { AdminDraftOrder, DetailWidgetProps } from "@medusajs/framework/types";
import { Button, Container, Heading, Text } from "@medusajs/ui";
import { useState } from "react";
import { AdminApiError, adminFetch } from "../lib/api";
import { money, PROVIDER_NAME } from "../lib/format";

// "Charge the customer's saved payment method" on a draft order: POST
// /admin/draft-orders/:id/purchase-auth-charge. The route charges first and converts the draft only
// once the service authorized (or accepted) it; pressing the button again never charges twice.

interface ChargeAnswer {
  charge: { status: string; amount: string | null; currency_code: string | null; message: string };
  order: { id: string; is_draft_order: boolean };
}

type Outcome = { tone: "done" | "failed"; text: string; orderId?: string };

function outcomeOf(answer: ChargeAnswer): Outcome {
  const { status, amount, currency_code: currency } = answer.charge;
  const charged = money(amount, currency);
  const placed = answer.order.is_draft_order ? "" : " The draft is now an order.";
  if (status === "pending") {
    return {
      tone: "done",
      text: `Accepted: the service confirms the charge of ${charged} shortly.${placed}`,
      orderId: answer.order.id,
    };
  }
  return { tone: "done", text: `Charged ${charged}.${placed}`, orderId: answer.order.id };
}

const DraftOrderPurchaseAuthChargeWidget = ({ data: draft }: DetailWidgetProps<AdminDraftOrder>) => {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>();

  const charge = async () => {
    setBusy(true);
    setOutcome(undefined);
    try {
      const answer = await adminFetch<ChargeAnswer>(
        `/admin/draft-orders/${encodeURIComponent(draft.id)}/purchase-auth-charge`,
        { method: "POST", body: {} },
      );
      setOutcome(outcomeOf(answer));
    } catch (caught) {
      // A decline (422) or an unknown outcome (503) comes with Medusa's message, naming the reason.
      const text =
        caught instanceof AdminApiError
          ? caught.message
          : "The charge could not be sent. Pressing the button again is safe: it never charges twice.";
      setOutcome({ tone: "failed", text });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Container className="divide-y p-0" data-testid="purchase-auth-draft-charge">
      <div className="px-6 py-4">
        <Heading level="h2">{PROVIDER_NAME}</Heading>
        <Text size="small" className="text-ui-fg-subtle">
          Charge the customer's saved payment method for this draft, then place it as an order.
        </Text>
      </div>
      <div className="flex flex-col gap-y-3 px-6 py-4">
        <Button size="small" isLoading={busy} disabled={busy} onClick={() => void charge()}>
          Charge the customer's saved payment method
        </Button>
        {outcome ? (
          <Text
            size="small"
            data-testid="purchase-auth-draft-charge-outcome"
            data-tone={outcome.tone}
            className={outcome.tone === "failed" ? "text-ui-fg-error" : "text-ui-fg-base"}
          >
            {outcome.text}
            {outcome.orderId && outcome.tone === "done" ? (
              <>
                {" "}
                <a className="text-ui-fg-interactive" href={`/app/orders/${outcome.orderId}`}>
                  Open the order
                </a>
              </>
            ) : null}
          </Text>
        ) : null}
      </div>
    </Container>
  );
};

export const config = defineWidgetConfig({ zone: "draft_order.details.side" });

export default DraftOrderPurchaseAuthChargeWidget;
