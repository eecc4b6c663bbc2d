import { MedusaError } from "@medusajs/framework/utils";
import { createStep, StepResponse } from "@medusajs/framework/workflows-sdk";
import { accountHoldersWithToken } from "../lookups";

export interface EnsureTokenUnclaimedInput {
  customer_id: string;
  customer_token: string;
}

/**
 * A customer token belongs to one customer: attaching one that is stored for another customer is
 * refused (DUPLICATE_ERROR → HTTP 422), naming why. Re-attaching it to the same customer is fine.
 */
export const ensureTokenUnclaimedStep = createStep(
  "purchase-auth-ensure-token-unclaimed",
  async (input: EnsureTokenUnclaimedInput, { container }) => {
    const holders = await accountHoldersWithToken(container, input.customer_token);
    const others = holders.filter(
      (holder) => holder.external_id !== input.customer_id && holder.data?.customer_id !== input.customer_id,
    );
    if (others.length > 0) {
      throw new MedusaError(
        MedusaError.Types.DUPLICATE_ERROR,
        "This customer token is already attached to another customer; a token belongs to one customer. Remove it there first.",
      );
    }
    return new StepResponse(true);
  },
);
