export { OUTCOME_OVERDUE } from "../providers/purchase-auth/outcome-overdue";
export { isPurchaseAuthProviderId } from "../providers/purchase-auth/provider-ids";
export {
  type LiveCustomerToken,
  readCustomerTokensLive,
  readServicePaymentView,
  type ServicePaymentView,
} from "../providers/purchase-auth/service-view";
export {
  type AttachCustomerTokenInput,
  attachCustomerTokenWorkflow,
  attachCustomerTokenWorkflowId,
} from "./attach-customer-token";
export {
  type ChargeStoredTokenInput,
  chargeStoredTokenWorkflow,
  chargeStoredTokenWorkflowId,
} from "./charge-stored-token";
export type {
  StoredTokenCharge,
  StoredTokenChargeRetry,
  StoredTokenChargeStatus,
} from "./charge-stored-token-result";
export { detachAllCustomerTokens } from "./detach-all-customer-tokens";
export {
  type DetachCustomerTokenInput,
  detachCustomerTokenWorkflow,
  detachCustomerTokenWorkflowId,
} from "./detach-customer-token";
export {
  followCanceledOrder,
  followFailedAuthorization,
  followServiceOrder,
  followTokenStatus,
} from "./follow-service";
export { type CustomerTokenView, listCustomerTokens } from "./list-customer-tokens";
export { type ReconcileReport, reconcileUnknownOutcomes } from "./reconcile";
export {
  RECORDED_WRITE_GIVE_UP_AFTER_MS,
  RECORDED_WRITE_GRACE_MS,
  RECORDED_WRITE_MAX_TRIES,
} from "./recorded-writes";
