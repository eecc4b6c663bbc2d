import { defineWidgetConfig } from "@medusajs/admin-sdk";
import type { AdminCustomer, DetailWidgetProps } from "@medusajs/framework/types";
import { Button, Container, Heading, Input, Label, StatusBadge, Table, Text, usePrompt } from "@medusajs/ui";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { adminFetch } from "../lib/api";
import { maskToken, PROVIDER_NAME, providerInstance, tokenStatusColor, when } from "../lib/format";

/** A stored token as GET /admin/customers/:id/purchase-auth-tokens?live=true answers it. */
interface LiveToken {
  customer_token: string;
  currency: string;
  added_at: string;
  /** The status last recorded in Medusa (at attach, or from the service's event). */
  status?: string;
  provider_id: string;
  /** The service's status read now; null when it could not be read. */
  live_status: string | null;
  live_error: string | null;
}

/**
 * The customer's stored customer tokens with their status at the service now; attach a token (from
 * the customer's first checkout) and remove one (it is also cancelled at the service).
 */
const CustomerPurchaseAuthTokensWidget = ({ data: customer }: DetailWidgetProps<AdminCustomer>) => {
  const base = `/admin/customers/${encodeURIComponent(customer.id)}/purchase-auth-tokens`;
  const [tokens, setTokens] = useState<LiveToken[] | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [newToken, setNewToken] = useState("");
  const [actionError, setActionError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const prompt = usePrompt();

  const load = useCallback(async () => {
    try {
      const body = await adminFetch<{ customer_tokens: LiveToken[] }>(`${base}?live=true`);
      setTokens(body.customer_tokens);
      setLoadError(undefined);
    } catch (error) {
      setLoadError((error as Error).message);
    }
  }, [base]);

  useEffect(() => {
    void load();
  }, [load]);

  const attach = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setActionError(undefined);
    try {
      await adminFetch(base, { method: "POST", body: { customer_token: newToken.trim() } });
      setNewToken("");
      await load();
    } catch (error) {
      setActionError((error as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const remove = async (token: LiveToken) => {
    const confirmed = await prompt({
      title: "Remove the stored token?",
      description: `${maskToken(token.customer_token)} is detached from ${customer.email} and cancelled at the ${PROVIDER_NAME}. The customer can no longer pay with it.`,
      confirmText: "Remove",
      cancelText: "Keep",
    });
    if (!confirmed) return;
    setBusy(true);
    setActionError(undefined);
    try {
      await adminFetch(`${base}/${encodeURIComponent(token.customer_token)}`, { method: "DELETE" });
      await load();
    } catch (error) {
      setActionError((error as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Container className="divide-y p-0" data-testid="purchase-auth-customer-tokens">
      <div className="flex items-center justify-between px-6 py-4">
        <div>
          <Heading level="h2">Stored customer tokens</Heading>
          <Text size="small" className="text-ui-fg-subtle">
            {PROVIDER_NAME}: status read from the service now
          </Text>
        </div>
        <Button size="small" variant="secondary" onClick={() => void load()} disabled={busy}>
          Refresh
        </Button>
      </div>
      {loadError ? (
        <Text className="text-ui-fg-error px-6 py-4" data-testid="purchase-auth-load-error">
          Could not read the tokens: {loadError}
        </Text>
      ) : tokens === undefined ? (
        <Text className="text-ui-fg-subtle px-6 py-4">Loading…</Text>
      ) : tokens.length === 0 ? (
        <Text className="text-ui-fg-subtle px-6 py-4">No stored tokens.</Text>
      ) : (
        <Table>
          <Table.Header>
            <Table.Row>
              <Table.HeaderCell>Token</Table.HeaderCell>
              <Table.HeaderCell>Currency</Table.HeaderCell>
              <Table.HeaderCell>Status at the service</Table.HeaderCell>
              <Table.HeaderCell>Added</Table.HeaderCell>
              <Table.HeaderCell />
            </Table.Row>
          </Table.Header>
          <Table.Body>
            {tokens.map((token) => (
              <Table.Row
                key={`${token.provider_id}:${token.customer_token}`}
                data-testid="purchase-auth-token"
              >
                <Table.Cell>
                  <span title={`provider ${providerInstance(token.provider_id)}`}>
                    {maskToken(token.customer_token)}
                  </span>
                </Table.Cell>
                <Table.Cell>{token.currency}</Table.Cell>
                <Table.Cell>
                  <span data-testid="purchase-auth-token-status">
                    <StatusBadge color={tokenStatusColor(token.live_status)}>
                      {token.live_status ?? "Unknown"}
                    </StatusBadge>
                  </span>
                  {token.live_error ? (
                    <Text size="xsmall" className="text-ui-fg-error">
                      {token.live_error}
                    </Text>
                  ) : null}
                </Table.Cell>
                <Table.Cell>{when(token.added_at)}</Table.Cell>
                <Table.Cell className="text-right">
                  <Button size="small" variant="danger" disabled={busy} onClick={() => void remove(token)}>
                    Remove
                  </Button>
                </Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </Table>
      )}
      <form className="flex flex-col gap-y-2 px-6 py-4" onSubmit={(event) => void attach(event)}>
        <Label htmlFor="purchase-auth-new-token" size="small" weight="plus">
          Attach a customer token
        </Label>
        <div className="flex gap-x-2">
          <Input
            id="purchase-auth-new-token"
            size="small"
            placeholder="00000000-0000-0000-0000-000000000000"
            value={newToken}
            onChange={(event) => setNewToken(event.target.value)}
            autoComplete="off"
          />
          <Button size="small" type="submit" disabled={busy || newToken.trim() === ""}>
            Attach
          </Button>
        </div>
        {actionError ? (
          <Text size="small" className="text-ui-fg-error" data-testid="purchase-auth-action-error">
            {actionError}
          </Text>
        ) : null}
      </form>
    </Container>
  );
};

export const config = defineWidgetConfig({ zone: "customer.details" });

export default CustomerPurchaseAuthTokensWidget;
