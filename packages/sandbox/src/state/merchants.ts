import { timingSafeEqual } from "node:crypto";

/** A merchant: owns API clients, customer tokens, authorizations and orders. */
export interface Merchant {
  readonly merchantId: string;
  readonly name: string;
  readonly storeId: string;
  /** Where its webhooks go; empty = none are sent. */
  webhookUrls: readonly string[];
  /** Every secret signs each delivery (rotation); any one valid `v1=` entry is enough for a receiver. */
  webhookSecrets: readonly string[];
}

/** An API key of a merchant: what the token endpoint authenticates. */
export interface ApiClient {
  readonly clientId: string;
  readonly clientSecret: string;
  /** The one scope value this client may ask for (exact match, as the specification's constant). */
  readonly scope: string;
  readonly merchantId: string;
}

export class MerchantStore {
  readonly #merchants = new Map<string, Merchant>();
  readonly #clients = new Map<string, ApiClient>();

  addMerchant(merchant: Merchant): Merchant {
    this.#merchants.set(merchant.merchantId, merchant);
    return merchant;
  }

  merchant(merchantId: string): Merchant | undefined {
    return this.#merchants.get(merchantId);
  }

  addClient(client: ApiClient): ApiClient {
    this.#clients.set(client.clientId, client);
    return client;
  }

  client(clientId: string): ApiClient | undefined {
    return this.#clients.get(clientId);
  }

  /** The client when id and secret match; the secret is compared in constant time. */
  authenticate(clientId: string, clientSecret: string): ApiClient | undefined {
    const client = this.#clients.get(clientId);
    if (client === undefined) return undefined;
    const expected = Buffer.from(client.clientSecret);
    const given = Buffer.from(clientSecret);
    return expected.length === given.length && timingSafeEqual(expected, given) ? client : undefined;
  }

  clear(): void {
    this.#merchants.clear();
    this.#clients.clear();
  }
}
