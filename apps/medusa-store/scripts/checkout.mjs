// Walks through a checkout against the running example shop (`pnpm dev` first), through Medusa's
// HTTP API as a storefront and an admin would: the seeded customer pays with their stored customer
// token, then the admin captures the payment.
const base = process.env.MEDUSA_URL ?? "http://localhost:9000";

async function call(method, path, { body, headers = {} } = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

const login = async (actor, email) =>
  (await call("POST", `/auth/${actor}/emailpass`, { body: { email, password: "supersecret" } })).token;

const admin = { authorization: `Bearer ${await login("user", "admin@example.com")}` };
const { api_keys: keys } = await call("GET", "/admin/api-keys?type=publishable", { headers: admin });
const shopper = {
  "x-publishable-api-key": keys.find((key) => key.title === "Webshop").token,
  authorization: `Bearer ${await login("customer", "customer@example.com")}`,
};

const { customer_tokens: tokens } = await call("GET", "/store/customers/me/purchase-auth-tokens", {
  headers: shopper,
});
console.log(
  "stored customer tokens:",
  tokens.map((token) => `${token.customer_token} (${token.currency})`).join(", "),
);

const { regions } = await call("GET", "/store/regions", { headers: shopper });
const region = regions.find((candidate) => candidate.name === "Sweden");
const { products } = await call("GET", `/store/products?region_id=${region.id}`, { headers: shopper });
const address = {
  first_name: "Greta",
  last_name: "Garbo",
  address_1: "Drottninggatan 1",
  city: "Stockholm",
  country_code: "se",
  postal_code: "11151",
};
let { cart } = await call("POST", "/store/carts", {
  headers: shopper,
  body: {
    region_id: region.id,
    items: [{ variant_id: products[0].variants[0].id, quantity: 2 }],
    shipping_address: address,
    billing_address: address,
  },
});
const { shipping_options: options } = await call("GET", `/store/shipping-options?cart_id=${cart.id}`, {
  headers: shopper,
});
({ cart } = await call("POST", `/store/carts/${cart.id}/shipping-methods`, {
  headers: shopper,
  body: { option_id: options[0].id },
}));
console.log(`cart ${cart.id}: total ${cart.total} ${cart.currency_code.toUpperCase()}`);

const { payment_collection: collection } = await call("POST", "/store/payment-collections", {
  headers: shopper,
  body: { cart_id: cart.id },
});
await call("POST", `/store/payment-collections/${collection.id}/payment-sessions`, {
  headers: shopper,
  body: { provider_id: "pp_purchase-auth_purchase-auth", data: {} },
});
const completed = await call("POST", `/store/carts/${cart.id}/complete`, { headers: shopper });
if (completed.type !== "order")
  throw new Error(`the cart did not complete: ${JSON.stringify(completed.error)}`);
console.log(`order ${completed.order.id} placed`);

const { order } = await call(
  "GET",
  `/admin/orders/${completed.order.id}?fields=*payment_collections.payments`,
  { headers: admin },
);
const payment = order.payment_collections[0].payments[0];
console.log(
  `payment ${payment.id}: authorization ${payment.data.authorization_id}, order ${payment.data.order_id} at the service`,
);
await call("POST", `/admin/payments/${payment.id}/capture`, { headers: admin, body: {} });
const { payment: captured } = await call("GET", `/admin/payments/${payment.id}?fields=id,data,*captures`, {
  headers: admin,
});
console.log(`captured ${captured.data.captured_amount} (state ${captured.data.state})`);
