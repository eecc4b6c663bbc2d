import type { IPaymentModuleService } from "@medusajs/framework/types";
import { Modules } from "@medusajs/framework/utils";
import { moduleIntegrationTestRunner } from "@medusajs/test-utils";
import { afterAll, beforeAll } from "vitest";
import type { moduleSandbox } from "./module-suite";
import { paymentModuleFolder } from "./payment-module";

/** What Medusa's module runner hands a suite: the payment module and its application. */
export interface PaymentModuleContext {
  payment: IPaymentModuleService;
  medusaApp: { sharedContainer?: { resolve(key: string): unknown } };
}

/**
 * One file's payment-module tests: `suite`'s sandbox started before them and closed after, and
 * `tests` run in Medusa's module runner on the file's own database, with `providers` (and `logger`,
 * when given, as the module's logger).
 */
export function paymentModuleTests(
  suite: ReturnType<typeof moduleSandbox>,
  options: { dbName: string; providers: unknown[]; logger?: unknown },
  tests: (context: PaymentModuleContext) => void,
): void {
  beforeAll(async () => {
    await suite.start();
  });
  afterAll(async () => {
    await suite.state.sandbox?.close();
  });
  moduleIntegrationTestRunner<IPaymentModuleService>({
    moduleName: Modules.PAYMENT,
    resolve: paymentModuleFolder(),
    dbName: options.dbName,
    ...(options.logger === undefined ? {} : { injectedDependencies: { logger: options.logger } }),
    moduleOptions: { providers: options.providers },
    testSuite: ({ service, medusaApp }) => tests({ payment: service, medusaApp }),
  });
}
