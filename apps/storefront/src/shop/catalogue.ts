// The price list lives on the server. The browser only ever names a product (its sku) and a
// quantity; the price charged is always looked up here, so a tampered form cannot change it.

/** Which drawing the catalogue shows for a product (see views/product-art.ts). */
export type ProductArt = "beans" | "espresso" | "ground" | "mug" | "kettle" | "grinder";

export interface Product {
  /** Sent to the service as the item id (at most 50 characters). */
  sku: string;
  /** Sent as the item description (the service keeps at most 50 characters). */
  name: string;
  summary: string;
  /** VAT included, a decimal string: money never goes through a binary float. */
  unitPrice: string;
  /** VAT rate in percent. */
  vat: number;
  art: ProductArt;
}

/** Every price is in this currency; the demo customer tokens are EUR tokens. */
export const CURRENCY = "EUR";

export const CATALOGUE: readonly Product[] = [
  {
    sku: "beans-house-1kg",
    name: "House blend beans, 1 kg",
    summary: "Medium roast from Brazil and Colombia. Chocolate, hazelnut, low acidity.",
    unitPrice: "24.90",
    vat: 15,
    art: "beans",
  },
  {
    sku: "beans-espresso-1kg",
    name: "Espresso beans, 1 kg",
    summary: "Dark roast for espresso machines. Thick crema, notes of caramel.",
    unitPrice: "27.50",
    vat: 15,
    art: "espresso",
  },
  {
    sku: "ground-filter-500g",
    name: "Filter coffee, ground, 500 g",
    summary: "Ground for drip brewers and the office filter machine.",
    unitPrice: "12.90",
    vat: 15,
    art: "ground",
  },
  {
    sku: "mug-stoneware",
    name: "Stoneware mug, 300 ml",
    summary: "Dishwasher-safe, with our harbour logo. Sold individually.",
    unitPrice: "9.50",
    vat: 25,
    art: "mug",
  },
  {
    sku: "kettle-pour-over",
    name: "Pour-over kettle, 1 l",
    summary: "Gooseneck spout for a slow, even pour. Stainless steel.",
    unitPrice: "49.00",
    vat: 25,
    art: "kettle",
  },
  {
    sku: "grinder-burr",
    name: "Burr grinder",
    summary: "Conical steel burrs, 40 grind settings, quiet enough for an open office.",
    unitPrice: "129.00",
    vat: 25,
    art: "grinder",
  },
];

const BY_SKU = new Map(CATALOGUE.map((product) => [product.sku, product]));

export function findProduct(sku: string): Product | undefined {
  return BY_SKU.get(sku);
}
