import type { ShopCredentials } from "../wire.js";

/** One way of sending the create-authorization call; `create` resolves after a 200 was read. */
export interface CreateVariant {
  readonly name: VariantName;
  create(): Promise<void>;
  close(): Promise<void>;
}

export type VariantName = "ours" | "raw-undici" | "fetch" | "axios";

export type VariantFactory = (shop: ShopCredentials) => Promise<CreateVariant>;

/** The connection pool size every variant gets (core's default Agent uses the same). */
export const MAX_CONNECTIONS = 128;
