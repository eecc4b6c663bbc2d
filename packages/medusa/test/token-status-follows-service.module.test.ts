import type { SubscriberArgs } from "@medusajs/framework";
import type { PaymentCustomerDTO, ProviderWebhookPayload } from "@medusajs/framework/types";
import { signWebhook, type WebhookEvent } from "@purchase-auth/core";
import { expect, it } from "vitest";
import { chooseToken, readAccountHolderData } from "../src/providers/purchase-auth/stored-tokens";
import purchaseAuthWebhook from "../src/subscribers/purchase-auth-webhook";
import { storeCustomerToken } from "./support/payment-module";
import { type SyncProviderContext, syncProviderTests } from "./support/sync-provider-tests";

// Supplement C: webhooks may arrive twice and out of order. A customer-token.status-changed event
// must never move a stored token's status backwards: the plugin stores the status the service
// reports when the event is handled, not the event's.

syncProviderTests("token-status-follows-service", (context) => {
  const { payment, providerId, sandbox, pg } = context;
  let customers = 0;

  /** A customer whose account holder stores `token` (no status learned yet). */
  async function holderWith(token: string): Promise<string> {
    customers += 1;
    const customer: PaymentCustomerDTO = {
      id: `cus_token_status_${customers}`,
      email: `t${customers}@example.com`,
    };
    return (await storeCustomerToken(payment, providerId, customer, token)).id;
  }

  async function storedStatus(holderId: string, token: string): Promise<string | undefined> {
    const { rows } = await pg().raw("select data from account_holder where id = ?", [holderId]);
    const data = (
      rows as Array<{ data: { customer_tokens: Array<{ customer_token: string; status?: string }> } }>
    )[0]?.data;
    return data?.customer_tokens.find((entry) => entry.customer_token === token.toLowerCase())?.status;
  }

  /** The service's status-changed events of `token`, in the order it sent them. */
  async function statusEvents(token: string): Promise<WebhookEvent[]> {
    await sandbox().settle();
    return sandbox()
      .events()
      .map((entry) => entry.event)
      .filter(
        (event) =>
          event.type === "customer-token.status-changed" &&
          (event.data as { customerToken: string }).customerToken === token,
      );
  }

  it("a stale Pending after Active, and a redelivered Active after Revoked, leave the service's status", async () => {
    const token = context.suite.newToken();
    const holderId = await holderWith(token);
    sandbox().setCustomerTokenStatus(token, "Pending");
    sandbox().setCustomerTokenStatus(token, "Active");
    const [toPending, toActive] = await statusEvents(token);
    expect(toPending?.data).toMatchObject({ status: "Pending", previousStatus: "Active" });
    expect(toActive?.data).toMatchObject({ status: "Active", previousStatus: "Pending" });

    // Out of order: the later event first, then the older one.
    await deliver(context, toActive!);
    expect(await storedStatus(holderId, token)).toBe("Active");
    await deliver(context, toPending!);
    expect(await storedStatus(holderId, token)).toBe("Active");

    // Revoked, then a redelivery of the old Active.
    sandbox().setCustomerTokenStatus(token, "Revoked");
    const toRevoked = (await statusEvents(token))[2];
    expect(toRevoked?.data).toMatchObject({ status: "Revoked", previousStatus: "Active" });
    await deliver(context, toRevoked!);
    expect(await storedStatus(holderId, token)).toBe("Revoked");
    await deliver(context, toActive!);
    expect(await storedStatus(holderId, token)).toBe("Revoked");
  });

  it("a token the service does not know for this merchant is stored NotFound (never picked)", async () => {
    const token = context.suite.newToken();
    const holderId = await holderWith(token);
    // The same entry also names a token of another merchant: this merchant's service answers 404.
    const other = sandbox().createMerchant();
    const foreign = sandbox().createCustomerToken({ merchantId: other.merchantId }).customerToken;
    const { rows } = await pg().raw("select * from account_holder where id = ?", [holderId]);
    const row = (rows as Array<Record<string, unknown> & { data: { customer_tokens: unknown[] } }>)[0]!;
    await payment.updateAccountHolder({
      id: holderId,
      provider_id: providerId,
      context: {
        account_holder: {
          ...row,
          data: {
            ...row.data,
            customer_tokens: [
              ...row.data.customer_tokens,
              { customer_token: foreign, currency: "EUR", added_at: new Date().toISOString() },
            ],
          },
        } as never,
      },
    });
    sandbox().setCustomerTokenStatus(foreign, "Pending");
    sandbox().setCustomerTokenStatus(foreign, "Active");
    const toActive = (await statusEvents(foreign))[1];
    expect(toActive?.data).toMatchObject({ status: "Active" });

    await deliver(context, toActive!);
    expect(await storedStatus(holderId, foreign)).toBe("NotFound");
    // The holder's other token is left as it was, and is the one picked by default (not the later one).
    expect(await storedStatus(holderId, token)).toBeUndefined();
    const after = await pg().raw("select data from account_holder where id = ?", [holderId]);
    const data = readAccountHolderData((after.rows as Array<{ data: Record<string, unknown> }>)[0]?.data);
    expect(chooseToken(data, undefined, "EUR").customer_token).toBe(token.toLowerCase());
    expect(() => chooseToken(data, foreign, "EUR")).toThrow(/NotFound at the service/);
  });

  it("a status the service cannot be asked for throws (the event bus delivers it again) and stores nothing", async () => {
    const token = context.suite.newToken();
    const holderId = await holderWith(token);
    sandbox().setCustomerTokenStatus(token, "Revoked");
    const [toRevoked] = await statusEvents(token);
    sandbox().injectFault({
      kind: "unavailable",
      match: { method: "GET", path: "/purchase/customer-tokens" },
      count: null,
    });
    try {
      await expect(deliver(context, toRevoked!)).rejects.toThrow();
    } finally {
      sandbox().clearFaults();
    }
    expect(await storedStatus(holderId, token)).toBeUndefined();
    // The redelivery, once the service answers, stores its status.
    await deliver(context, toRevoked!);
    expect(await storedStatus(holderId, token)).toBe("Revoked");
  });
});

/** Medusa's WebhookReceived event for `event`, signed as the service signs it, handled by the plugin's subscriber. */
async function deliver(context: SyncProviderContext, event: WebhookEvent): Promise<void> {
  const signed = signWebhook(event, context.webhookSecret);
  await purchaseAuthWebhook({
    event: {
      name: "payment.webhook_received",
      data: {
        provider: context.providerId.replace(/^pp_/, ""),
        payload: { data: {}, rawData: Buffer.from(signed.body), headers: signed.headers },
      },
    },
    container: context.container(),
    pluginOptions: {},
  } as unknown as SubscriberArgs<ProviderWebhookPayload>);
}
