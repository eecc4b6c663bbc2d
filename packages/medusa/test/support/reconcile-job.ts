import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";

/** What the module runner hands a test suite: the application's shared container holds PG. */
interface MedusaAppLike {
  sharedContainer?: { resolve(key: string): unknown };
}

/**
 * What the reconcile job resolves from the application's container: the payment module, a logger
 * and the PostgreSQL connection.
 */
export function jobContainer(
  payment: IPaymentModuleService,
  medusaApp: MedusaAppLike,
  logger: unknown,
): MedusaContainer {
  const registry: Record<string, unknown> = {
    [Modules.PAYMENT]: payment,
    [ContainerRegistrationKeys.LOGGER]: logger,
    [ContainerRegistrationKeys.PG_CONNECTION]: medusaApp.sharedContainer!.resolve(
      ContainerRegistrationKeys.PG_CONNECTION,
    ),
  };
  return { resolve: (key: string) => registry[key] } as unknown as MedusaContainer;
}

/**
 * Medusa's order–payment-collection link table, which the job reads to tell a merchant-initiated
 * charge from a checkout, and the columns of Medusa's order table the job reads to find canceled
 * orders and charged drafts. The module runner makes only the payment module's tables: here they are empty (every
 * session is a checkout's) until a test adds an order (see canceled-order.ts).
 */
export async function orderLinkTable(medusaApp: MedusaAppLike): Promise<void> {
  const pg = medusaApp.sharedContainer!.resolve(ContainerRegistrationKeys.PG_CONNECTION) as {
    raw(sql: string): Promise<unknown>;
  };
  await pg.raw(
    `create table if not exists order_payment_collection (
       id text primary key, order_id text not null, payment_collection_id text not null,
       created_at timestamptz not null default now(), updated_at timestamptz not null default now(),
       deleted_at timestamptz)`,
  );
  await pg.raw(
    `create table if not exists "order" (
       id text primary key, status text not null default 'pending', canceled_at timestamptz,
       is_draft_order boolean not null default false, deleted_at timestamptz)`,
  );
}
