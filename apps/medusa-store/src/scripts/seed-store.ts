import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, Modules, ProductStatus } from "@medusajs/framework/utils";
import {
  createApiKeysWorkflow,
  createProductsWorkflow,
  createRegionsWorkflow,
  createSalesChannelsWorkflow,
  createShippingOptionsWorkflow,
  createShippingProfilesWorkflow,
  createStockLocationsWorkflow,
  createTaxRegionsWorkflow,
  linkSalesChannelsToApiKeyWorkflow,
  linkSalesChannelsToStockLocationWorkflow,
  updatePricePreferencesWorkflow,
} from "@medusajs/medusa/core-flows";

/** The payment provider as medusa-config.ts registers it (`pp_<identifier>_<id>`). */
export const PURCHASE_AUTH_PROVIDER_ID = "pp_purchase-auth_purchase-auth";

export interface SeededStore {
  publishableKey: string;
  regionId: string;
  salesChannelId: string;
  variantId: string;
  shippingOptionId: string;
}

/**
 * A small shop: one region (Sweden, EUR, 25 % VAT) where the purchase-auth provider is enabled, a
 * product at 24.90 incl. VAT, flat shipping at 4.90, and a publishable key for the storefront.
 */
export async function seedStore(container: MedusaContainer): Promise<SeededStore> {
  const {
    result: [salesChannel],
  } = await createSalesChannelsWorkflow(container).run({
    input: { salesChannelsData: [{ name: "Webshop" }] },
  });
  const {
    result: [apiKey],
  } = await createApiKeysWorkflow(container).run({
    input: { api_keys: [{ title: "Webshop", type: "publishable", created_by: "" }] },
  });
  await linkSalesChannelsToApiKeyWorkflow(container).run({
    input: { id: apiKey!.id, add: [salesChannel!.id] },
  });

  const {
    result: [region],
  } = await createRegionsWorkflow(container).run({
    input: {
      regions: [
        {
          name: "Sweden",
          currency_code: "eur",
          countries: ["se"],
          // Enabling the provider on a region is what lets its carts use it.
          payment_providers: [PURCHASE_AUTH_PROVIDER_ID],
          is_tax_inclusive: true,
        },
      ],
    },
  });
  // Prices in EUR include VAT, as shoppers in Sweden see them.
  await updatePricePreferencesWorkflow(container).run({
    input: { selector: { attribute: "currency_code", value: "eur" }, update: { is_tax_inclusive: true } },
  });
  await createTaxRegionsWorkflow(container).run({
    input: [
      {
        country_code: "se",
        provider_id: "tp_system",
        default_tax_rate: { rate: 25, code: "SE-VAT", name: "Moms" },
      },
    ],
  });

  const {
    result: [location],
  } = await createStockLocationsWorkflow(container).run({
    input: {
      locations: [
        { name: "Warehouse", address: { address_1: "Storgatan 1", city: "Stockholm", country_code: "SE" } },
      ],
    },
  });
  await linkSalesChannelsToStockLocationWorkflow(container).run({
    input: { id: location!.id, add: [salesChannel!.id] },
  });
  const {
    result: [profile],
  } = await createShippingProfilesWorkflow(container).run({
    input: { data: [{ name: "Default", type: "default" }] },
  });
  const fulfillment = container.resolve(Modules.FULFILLMENT);
  const fulfillmentSet = await fulfillment.createFulfillmentSets({
    name: "Sweden delivery",
    type: "shipping",
    service_zones: [{ name: "Sweden", geo_zones: [{ country_code: "se", type: "country" }] }],
  });
  const link = container.resolve(ContainerRegistrationKeys.LINK);
  await link.create([
    {
      [Modules.STOCK_LOCATION]: { stock_location_id: location!.id },
      [Modules.FULFILLMENT]: { fulfillment_set_id: fulfillmentSet.id },
    },
    {
      [Modules.STOCK_LOCATION]: { stock_location_id: location!.id },
      [Modules.FULFILLMENT]: { fulfillment_provider_id: "manual_manual" },
    },
  ]);
  const {
    result: [shippingOption],
  } = await createShippingOptionsWorkflow(container).run({
    input: [
      {
        name: "Standard",
        price_type: "flat",
        provider_id: "manual_manual",
        service_zone_id: fulfillmentSet.service_zones[0]!.id,
        shipping_profile_id: profile!.id,
        type: { label: "Standard", description: "2-3 days", code: "standard" },
        prices: [
          { currency_code: "eur", amount: 4.9 },
          { region_id: region!.id, amount: 4.9 },
        ],
        rules: [
          { attribute: "enabled_in_store", value: "true", operator: "eq" },
          { attribute: "is_return", value: "false", operator: "eq" },
        ],
      },
    ],
  });

  const {
    result: [product],
  } = await createProductsWorkflow(container).run({
    input: {
      products: [
        {
          title: "Coffee beans 1 kg",
          status: ProductStatus.PUBLISHED,
          shipping_profile_id: profile!.id,
          options: [{ title: "Roast", values: ["Medium"] }],
          variants: [
            {
              title: "Medium roast",
              sku: "COFFEE-1KG-MEDIUM",
              options: { Roast: "Medium" },
              manage_inventory: false,
              prices: [{ currency_code: "eur", amount: 24.9 }],
            },
          ],
          sales_channels: [{ id: salesChannel!.id }],
        },
      ],
    },
  });

  return {
    publishableKey: apiKey!.token,
    regionId: region!.id,
    salesChannelId: salesChannel!.id,
    variantId: product!.variants[0]!.id,
    shippingOptionId: shippingOption!.id,
  };
}
