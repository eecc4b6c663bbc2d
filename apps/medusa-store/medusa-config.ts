import { defineConfig, loadEnv } from "@medusajs/framework/utils";

loadEnv(process.env.NODE_ENV || "development", process.cwd());

const options = {
  baseUrl: process.env.PURCHASE_AUTH_BASE_URL,
  clientId: process.env.PURCHASE_AUTH_CLIENT_ID,
  clientSecret: process.env.PURCHASE_AUTH_CLIENT_SECRET,
  scope: process.env.PURCHASE_AUTH_SCOPE,
  webhookSecret: process.env.PURCHASE_AUTH_WEBHOOK_SECRET,
  captureMode: process.env.PURCHASE_AUTH_CAPTURE_MODE ?? "Manual",
  defaultVatPercent: 25,
};

// The plugin installed exactly as its README tells a merchant: the plugin (for its routes,
// middleware and workflows) and the payment provider under the payment module.
module.exports = defineConfig({
  projectConfig: {
    databaseUrl: process.env.DATABASE_URL,
    http: {
      storeCors: process.env.STORE_CORS ?? "http://localhost:8000",
      adminCors: process.env.ADMIN_CORS ?? "http://localhost:9000",
      authCors: process.env.AUTH_CORS ?? "http://localhost:8000,http://localhost:9000",
      jwtSecret: process.env.JWT_SECRET ?? "supersecret",
      cookieSecret: process.env.COOKIE_SECRET ?? "supersecret",
    },
  },
  // The dashboard needs a separate build; this example is about the API. MEDUSA_ADMIN=true turns it on.
  admin: { disable: process.env.MEDUSA_ADMIN !== "true" },
  plugins: [{ resolve: "@purchase-auth/medusa", options: {} }],
  modules: [
    {
      resolve: "@medusajs/medusa/payment",
      options: {
        providers: [
          { resolve: "@purchase-auth/medusa/providers/purchase-auth", id: "purchase-auth", options },
          // A second purchase-auth provider (same account), as a merchant with two may configure it.
          ...(process.env.PURCHASE_AUTH_SECOND_PROVIDER_ID
            ? [
                {
                  resolve: "@purchase-auth/medusa/providers/purchase-auth",
                  id: process.env.PURCHASE_AUTH_SECOND_PROVIDER_ID,
                  options,
                },
              ]
            : []),
        ],
      },
    },
  ],
});
