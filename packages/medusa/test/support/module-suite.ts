import type { IPaymentModuleService, IPaymentProvider, PaymentCustomerDTO } from "@medusajs/framework/types";
import type { CustomerTokenStatus } from "@purchase-auth/core";
import { type MerchantCredentials, type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { ensureDatabase } from "purchase-auth-test-postgres";
import purchaseAuthProvider from "../../src/providers/purchase-auth/index";
import { storeCustomerToken } from "./payment-module";

/** A sandbox with one merchant, and provider configs that read its credentials once it started. */
export function moduleSandbox(dbName: string, webhookSecret: string) {
  const connection: Record<string, string> = {};
  const state: { sandbox?: SandboxServer; merchant?: MerchantCredentials } = {};
  let customers = 0;

  function providerConfig(id: string, extra: Record<string, unknown>) {
    // Shared by reference, so start() can fill in the sandbox's address before Medusa loads it.
    const options = new Proxy(extra, {
      get: (target, key: string) => (key in target ? target[key] : connection[key]),
      has: (target, key: string) => key in target || key in connection,
      ownKeys: (target) => [...new Set([...Reflect.ownKeys(target), ...Reflect.ownKeys(connection)])],
      getOwnPropertyDescriptor: (target, key: string) => ({
        value: key in target ? target[key] : connection[key],
        enumerable: true,
        configurable: true,
      }),
    });
    return { resolve: purchaseAuthProvider, id, options };
  }

  async function start() {
    await ensureDatabase(
      {
        host: process.env.DB_HOST!,
        port: Number(process.env.DB_PORT),
        user: process.env.DB_USERNAME!,
        password: process.env.DB_PASSWORD!,
      },
      dbName,
    );
    state.sandbox = await startSandbox();
    state.merchant = state.sandbox.createMerchant();
    Object.assign(connection, {
      baseUrl: state.sandbox.url,
      clientId: state.merchant.clientId,
      clientSecret: state.merchant.clientSecret,
      scope: state.merchant.scope,
      webhookSecret,
    });
  }

  function newToken(input: { status?: CustomerTokenStatus; currency?: string; funds?: string } = {}) {
    return state.sandbox!.createCustomerToken({ merchantId: state.merchant!.merchantId, ...input })
      .customerToken;
  }

  /** A logged-in customer with one stored token, and a payment session for `amount` EUR (and the customer). */
  async function openSession(
    payment: IPaymentModuleService,
    providerId: string,
    amount: number | string,
    token = newToken(),
  ) {
    customers += 1;
    const customer: PaymentCustomerDTO = {
      id: `cus_${dbName}_${customers}`,
      email: `b${customers}@example.com`,
    };
    const holder = await storeCustomerToken(payment, providerId, customer, token);
    const collection = await payment.createPaymentCollections({ amount, currency_code: "eur" });
    const session = await payment.createPaymentSession(collection.id, {
      provider_id: providerId,
      amount,
      currency_code: "eur",
      data: {},
      context: { customer, account_holder: holder },
    });
    return { session, token, customer };
  }

  return { state, providerConfig, start, newToken, openSession };
}

/** The provider instance the payment module registered (for calling it as Medusa would). */
export function providerOf(payment: IPaymentModuleService, id: string): IPaymentProvider {
  const internals = payment as unknown as {
    paymentProviderService_: { retrieveProvider(id: string): IPaymentProvider };
  };
  return internals.paymentProviderService_.retrieveProvider(id);
}
