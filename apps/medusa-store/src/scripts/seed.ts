import type { ExecArgs } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { seedDemoAccounts } from "./seed-accounts";
import { seedStore } from "./seed-store";

/**
 * `medusa exec ./src/scripts/seed.ts`: the example shop, an admin and a customer. Runs once: a
 * database that already has the shop's region is left alone. DEMO_CUSTOMER_TOKEN, when set, is
 * attached to the customer.
 */
export default async function seed({ container }: ExecArgs): Promise<void> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const regions = await container.resolve(Modules.REGION).listRegions({ name: "Sweden" });
  if (regions.length > 0) {
    logger.info("The example shop is already seeded.");
    return;
  }
  const store = await seedStore(container);
  const accounts = await seedDemoAccounts(container, process.env.DEMO_CUSTOMER_TOKEN);
  logger.info(
    [
      "Seeded the example shop:",
      `  publishable key  ${store.publishableKey}`,
      `  region           ${store.regionId}`,
      `  variant          ${store.variantId}`,
      `  shipping option  ${store.shippingOptionId}`,
      `  admin            ${accounts.admin.email} / ${accounts.admin.password}`,
      `  customer         ${accounts.customer.email} / ${accounts.customer.password}${process.env.DEMO_CUSTOMER_TOKEN ? ` (customer token ${process.env.DEMO_CUSTOMER_TOKEN} attached)` : ""}`,
    ].join("\n"),
  );
}
