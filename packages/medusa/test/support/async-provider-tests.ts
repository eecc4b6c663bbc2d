import { moduleSandbox } from "./module-suite";
import { type PaymentModuleContext, paymentModuleTests } from "./payment-module-tests";
import { recordingLogger } from "./recording-logger";

export interface AsyncProviderContext extends PaymentModuleContext {
  suite: ReturnType<typeof moduleSandbox>;
  logger: ReturnType<typeof recordingLogger>["logger"];
  /** "pp_purchase-auth_async": accepted with 202, one attempt as soon as possible, no retries. */
  providerId: string;
  /** The secret the sandbox signs webhooks with, for delivering them as the service would. */
  webhookSecret: string;
}

/**
 * One file's tests of the provider in asynchronous mode (a create is accepted with 202 and its
 * outcome comes by webhook; no retries, so a lost answer is unknown at once), on a database of its
 * own, `purchase-auth-medusa-<slug>`, with a sandbox whose webhooks are signed with `whsec-<slug>`.
 */
export function asyncProviderTests(slug: string, tests: (context: AsyncProviderContext) => void): void {
  const dbName = `purchase-auth-medusa-${slug}`;
  const webhookSecret = `whsec-${slug}`;
  const suite = moduleSandbox(dbName, webhookSecret);
  const { logger } = recordingLogger();
  paymentModuleTests(
    suite,
    {
      dbName,
      logger,
      providers: [suite.providerConfig("async", { attemptSchedule: "asap", maxRetries: 0 })],
    },
    (context) => tests({ ...context, suite, logger, providerId: "pp_purchase-auth_async", webhookSecret }),
  );
}
