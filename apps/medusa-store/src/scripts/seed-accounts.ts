import type { MedusaContainer } from "@medusajs/framework/types";
import { MedusaError, Modules } from "@medusajs/framework/utils";
import { createCustomerAccountWorkflow, createUserAccountWorkflow } from "@medusajs/medusa/core-flows";
import { attachCustomerTokenWorkflow } from "@purchase-auth/medusa/workflows";

export interface DemoAccounts {
  admin: { email: string; password: string };
  customer: { email: string; password: string; id: string };
}

async function registerIdentity(
  container: MedusaContainer,
  email: string,
  password: string,
): Promise<string> {
  const { success, authIdentity, error } = await container
    .resolve(Modules.AUTH)
    .register("emailpass", { body: { email, password } });
  if (!success || !authIdentity)
    throw new MedusaError(MedusaError.Types.INVALID_DATA, error ?? "register failed");
  return authIdentity.id;
}

/**
 * An admin user and a customer who can log in, and (when given) a customer token attached to the
 * customer with the plugin's workflow, as a merchant's backend does after the initial checkout.
 */
export async function seedDemoAccounts(
  container: MedusaContainer,
  customerToken?: string,
): Promise<DemoAccounts> {
  const admin = { email: "admin@example.com", password: "supersecret" };
  await createUserAccountWorkflow(container).run({
    input: {
      authIdentityId: await registerIdentity(container, admin.email, admin.password),
      userData: { email: admin.email },
    },
  });
  const customerLogin = { email: "customer@example.com", password: "supersecret" };
  const { result: customer } = await createCustomerAccountWorkflow(container).run({
    input: {
      authIdentityId: await registerIdentity(container, customerLogin.email, customerLogin.password),
      customerData: { email: customerLogin.email, first_name: "Greta", last_name: "Garbo" },
    },
  });
  if (customerToken) {
    await attachCustomerTokenWorkflow(container).run({
      input: { customer_id: customer.id, customer_token: customerToken },
    });
  }
  return { admin, customer: { ...customerLogin, id: customer.id } };
}
