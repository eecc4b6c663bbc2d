import { axiosVariant } from "./axios.js";
import { fetchVariant } from "./fetch.js";
import { oursVariant } from "./ours.js";
import { rawUndiciVariant } from "./raw-undici.js";
import type { VariantFactory, VariantName } from "./variant.js";

export const VARIANTS: ReadonlyArray<{ name: VariantName; open: VariantFactory }> = [
  { name: "ours", open: oursVariant },
  { name: "raw-undici", open: rawUndiciVariant },
  { name: "fetch", open: fetchVariant },
  { name: "axios", open: axiosVariant },
];

export type { CreateVariant, VariantName } from "./variant.js";
