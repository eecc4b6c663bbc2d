import type { MedusaContainer } from "@medusajs/framework/types";
import { createOrderWorkflow } from "@medusajs/medusa/core-flows";
import type { StoredTokenCharge } from "@purchase-auth/medusa/workflows";
import type { SeededStore } from "../../src/scripts/seed-store";
import { ADDRESS, type Shop } from "./checkout";
import type { Api } from "./store-api";

// Orders made without a checkout: by server code (a subscription's scheduled job) and by the admin.

/** An order made on the server, as the subscriptions recipe's job makes a renewal's order: 2 items. */
export async function serverOrder(
  container: MedusaContainer,
  store: SeededStore,
  customerId: string,
  email: string,
): Promise<string> {
  const { result } = await createOrderWorkflow(container).run({
    input: {
      region_id: store.regionId,
      sales_channel_id: store.salesChannelId,
      customer_id: customerId,
      email,
      currency_code: "eur",
      status: "pending",
      items: [{ variant_id: store.variantId, quantity: 2 }],
      shipping_methods: [{ name: "Standard", shipping_option_id: store.shippingOptionId, amount: 4.9 }],
      shipping_address: ADDRESS,
      billing_address: ADDRESS,
    } as never,
  });
  return result.id;
}

/** A draft order made through the admin API for `customerId`: 1 item and shipping. */
export async function draftOrder(
  api: Api,
  admin: Record<string, string>,
  store: SeededStore,
  customerId: string,
  email: string,
): Promise<string> {
  const { data } = await api.post<{ draft_order: { id: string } }>(
    "/admin/draft-orders",
    {
      region_id: store.regionId,
      sales_channel_id: store.salesChannelId,
      customer_id: customerId,
      email,
      items: [{ variant_id: store.variantId, quantity: 1 }],
      shipping_methods: [{ name: "Standard", shipping_option_id: store.shippingOptionId, amount: 4.9 }],
      shipping_address: ADDRESS,
      billing_address: ADDRESS,
    },
    { headers: admin },
  );
  return data.draft_order.id;
}

/** The admin's "charge the customer's saved payment method" on draft order `id`, whatever it answers. */
export function chargeDraft(shop: Shop, id: string) {
  return shop.api.post<{
    message?: string;
    charge: StoredTokenCharge;
    order: { id: string; status: string; is_draft_order: boolean };
  }>(
    `/admin/draft-orders/${id}/purchase-auth-charge`,
    {},
    { headers: shop.admin, validateStatus: () => true },
  );
}

/** Order `id` as the admin reads it now: its status, whether it is still a draft, and its total. */
export async function orderState(shop: Shop, id: string) {
  const { data } = await shop.api.get<{ order: { status: string; is_draft_order: boolean; total: number } }>(
    `/admin/orders/${id}?fields=id,status,is_draft_order,total`,
    { headers: shop.admin },
  );
  return data.order;
}
