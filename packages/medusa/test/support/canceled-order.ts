import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, PaymentCollectionStatus } from "@medusajs/framework/utils";
import type { Knex } from "../../src/providers/purchase-auth/session-sql";
import purchaseAuthOrderCanceled from "../../src/subscribers/purchase-auth-order-canceled";
import { orderLinkTable } from "./reconcile-job";

interface MedusaAppLike {
  sharedContainer?: { resolve(key: string): unknown };
}

function pgOf(medusaApp: MedusaAppLike): Knex {
  return medusaApp.sharedContainer!.resolve(ContainerRegistrationKeys.PG_CONNECTION) as Knex;
}

/** The Medusa order id these tests give the order of payment collection `collectionId`. */
export function orderIdOf(collectionId: string): string {
  return `order_${collectionId}`;
}

/**
 * An order of payment collection `collectionId` in Medusa's order table and link table, live
 * (`pending`) unless `canceled`.
 */
export async function medusaOrder(
  medusaApp: MedusaAppLike,
  collectionId: string,
  canceled = false,
): Promise<string> {
  await orderLinkTable(medusaApp);
  const id = orderIdOf(collectionId);
  const pg = pgOf(medusaApp);
  await pg.raw(
    `insert into "order" (id, status, canceled_at) values (?, ?, ?)
     on conflict (id) do update set status = excluded.status, canceled_at = excluded.canceled_at`,
    [id, canceled ? "canceled" : "pending", canceled ? new Date().toISOString() : null],
  );
  await pg.raw(
    `insert into order_payment_collection (id, order_id, payment_collection_id) values (?, ?, ?)
     on conflict (id) do nothing`,
    [`ordpay_${collectionId}`, id, collectionId],
  );
  return id;
}

/**
 * What Medusa's cancelOrderWorkflow records once its payment steps ran (whatever they did): the
 * payment collection canceled, the order canceled.
 */
export async function cancelMedusaOrder(
  payment: IPaymentModuleService,
  medusaApp: MedusaAppLike,
  collectionId: string,
): Promise<string> {
  await payment.updatePaymentCollections(collectionId, { status: PaymentCollectionStatus.CANCELED });
  return medusaOrder(medusaApp, collectionId, true);
}

/**
 * The order-canceled subscriber for the order of `collectionId`, Medusa's query answering with the
 * collection's payments and sessions as they are when it reads.
 */
export async function orderCanceledSubscriber(
  payment: IPaymentModuleService,
  container: MedusaContainer,
  collectionId: string,
): Promise<void> {
  const medusaOrderId = orderIdOf(collectionId);
  const query = {
    graph: async () => ({
      data: [
        {
          id: medusaOrderId,
          payment_collections: [
            {
              payments: await payment.listPayments({ payment_collection_id: collectionId } as never, {
                relations: ["captures"],
              }),
              payment_sessions: await payment.listPaymentSessions({ payment_collection_id: collectionId }),
            },
          ],
        },
      ],
    }),
  };
  await runOrderCanceledSubscriber(container, medusaOrderId, query);
}

/** Medusa's order.canceled for `medusaOrderId` handed to the subscriber, its query answered by `query`. */
export async function runOrderCanceledSubscriber(
  container: MedusaContainer,
  medusaOrderId: string,
  query: { graph: () => Promise<unknown> },
): Promise<void> {
  const withQuery = {
    resolve: (key: string) => (key === ContainerRegistrationKeys.QUERY ? query : container.resolve(key)),
  } as unknown as MedusaContainer;
  await purchaseAuthOrderCanceled({
    event: { name: "order.canceled", data: { id: medusaOrderId } },
    container: withQuery,
    pluginOptions: {},
  } as never);
}
