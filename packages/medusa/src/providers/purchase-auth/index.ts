import { ModuleProvider, Modules } from "@medusajs/framework/utils";
import { PurchaseAuthProviderService } from "./service";

export type { AttemptSchedulePolicy, PurchaseAuthProviderOptions } from "./options";
export { PurchaseAuthProviderService } from "./service";

/** `resolve: "@purchase-auth/medusa/providers/purchase-auth"` under the payment module's providers. */
export default ModuleProvider(Modules.PAYMENT, { services: [PurchaseAuthProviderService] });
