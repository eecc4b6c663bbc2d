export { isPurchaseAuthProviderId } from "../providers/purchase-auth/provider-ids";
export {
  type AttachCustomerTokenInput,
  attachCustomerTokenWorkflow,
  attachCustomerTokenWorkflowId,
} from "./attach-customer-token";
export {
  type DetachCustomerTokenInput,
  detachCustomerTokenWorkflow,
  detachCustomerTokenWorkflowId,
} from "./detach-customer-token";
export { type CustomerTokenView, listCustomerTokens } from "./list-customer-tokens";
