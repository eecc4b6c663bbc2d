import { defineWidgetConfig } from "@medusajs/admin-sdk";
import type { AdminOrder, DetailWidgetProps } from "@medusajs/framework/types";
import { Alert, Button, Container, Heading, StatusBadge, Text } from "@medusajs/ui";
import { type ReactNode, useCallback, useEffect, useState } from "react";
import { adminFetch } from "../lib/api";
import { money, orderStatusColor, PROVIDER_NAME, providerInstance, when } from "../lib/format";

/** One entry of GET /admin/orders/:id/purchase-auth. */
interface PaymentView {
  payment_id: string | null;
  payment_session_id: string | null;
  provider_id: string;
  medusa: {
    kind: "payment" | "session";
    amount: string | null;
    currency_code: string;
    session_status: string | null;
    captured_at: string | null;
    canceled_at: string | null;
  };
  recorded: {
    state: string | null;
    order_id: string | null;
    authorization_id: string | null;
    failure_reason: string | null;
    failure_description: string | null;
    review_reason: string | null;
    medusa_canceled_at: string | null;
  };
  service_order: {
    orderId: string;
    status: string;
    currency: string;
    totalAmount: string;
    capturedAmount: string;
    refundedAmount: string;
    cancelledAmount: string;
    captureMode: string;
  } | null;
  service_error: string | null;
}

const Row = ({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) => (
  <div className="text-ui-fg-subtle grid grid-cols-2 items-center px-6 py-3">
    <Text size="small" weight="plus" leading="compact">
      {label}
    </Text>
    <Text size="small" leading="compact" data-testid={testId}>
      {children}
    </Text>
  </div>
);

const PaymentPanel = ({ view }: { view: PaymentView }) => {
  const order = view.service_order;
  const currency = order?.currency ?? view.medusa.currency_code;
  return (
    <div className="divide-y" data-testid="purchase-auth-payment">
      {view.recorded.review_reason ? (
        <div className="px-6 py-3">
          <Alert variant="warning" data-testid="purchase-auth-review">
            Needs review: {view.recorded.review_reason}
          </Alert>
        </div>
      ) : null}
      {view.recorded.failure_reason ? (
        <div className="px-6 py-3">
          <Alert variant="error" data-testid="purchase-auth-decline">
            Declined: {view.recorded.failure_description ?? view.recorded.failure_reason}
          </Alert>
        </div>
      ) : null}
      {view.service_error ? (
        <div className="px-6 py-3">
          <Alert variant="error">Could not read the service's order: {view.service_error}</Alert>
        </div>
      ) : null}
      <Row label="Status at the service" testId="purchase-auth-service-status">
        {order ? (
          <StatusBadge color={orderStatusColor(order.status)}>{order.status}</StatusBadge>
        ) : (
          "No order at the service"
        )}
      </Row>
      <Row label="Amount in Medusa" testId="purchase-auth-medusa-amount">
        {money(view.medusa.amount, view.medusa.currency_code)}
      </Row>
      <Row label="Authorized at the service" testId="purchase-auth-total">
        {money(order?.totalAmount, currency)}
      </Row>
      <Row label="Captured" testId="purchase-auth-captured">
        {money(order?.capturedAmount, currency)}
      </Row>
      <Row label="Refunded" testId="purchase-auth-refunded">
        {money(order?.refundedAmount, currency)}
      </Row>
      <Row label="Cancelled (released)" testId="purchase-auth-cancelled">
        {money(order?.cancelledAmount, currency)}
      </Row>
      <Row label="Capture mode">{order?.captureMode ?? "–"}</Row>
      <Row label="Recorded in Medusa" testId="purchase-auth-recorded-state">
        {view.recorded.state ?? "–"}
        {view.medusa.kind === "session"
          ? ` (session ${view.medusa.session_status ?? ""}, no payment yet)`
          : ""}
        {view.recorded.medusa_canceled_at ? `, order canceled ${when(view.recorded.medusa_canceled_at)}` : ""}
      </Row>
      <Row label="Service order">{order?.orderId ?? view.recorded.order_id ?? "–"}</Row>
      <Row label="Authorization">{view.recorded.authorization_id ?? "–"}</Row>
      <Row label="Provider">{providerInstance(view.provider_id)}</Row>
    </div>
  );
};

/**
 * The service's view of the order's payments with this provider, read now: its status, what it
 * captured, refunded and released, a decline's reason and anything a person must review.
 */
const OrderPurchaseAuthPaymentWidget = ({ data: order }: DetailWidgetProps<AdminOrder>) => {
  const [views, setViews] = useState<PaymentView[] | undefined>();
  const [error, setError] = useState<string | undefined>();

  const load = useCallback(async () => {
    try {
      const body = await adminFetch<{ purchase_auth_payments: PaymentView[] }>(
        `/admin/orders/${encodeURIComponent(order.id)}/purchase-auth`,
      );
      setViews(body.purchase_auth_payments);
      setError(undefined);
    } catch (caught) {
      setError((caught as Error).message);
    }
  }, [order.id]);

  useEffect(() => {
    void load();
  }, [load]);

  // Orders paid otherwise show nothing.
  if (views !== undefined && views.length === 0 && !error) return null;

  return (
    <Container className="divide-y p-0" data-testid="purchase-auth-order">
      <div className="flex items-center justify-between px-6 py-4">
        <div>
          <Heading level="h2">{PROVIDER_NAME}</Heading>
          <Text size="small" className="text-ui-fg-subtle">
            The payment as the service holds it now
          </Text>
        </div>
        <Button size="small" variant="secondary" onClick={() => void load()}>
          Refresh
        </Button>
      </div>
      {error ? (
        <Text className="text-ui-fg-error px-6 py-4">Could not read the payment: {error}</Text>
      ) : views === undefined ? (
        <Text className="text-ui-fg-subtle px-6 py-4">Loading…</Text>
      ) : (
        views.map((view) => (
          <PaymentPanel key={view.payment_id ?? view.payment_session_id ?? view.provider_id} view={view} />
        ))
      )}
    </Container>
  );
};

export const config = defineWidgetConfig({ zone: "order.details" });

export default OrderPurchaseAuthPaymentWidget;
