// A Medusa payment module with the plugin's provider, on the test store's database, in a process of
// its own: a test kills it (SIGKILL) in the middle of a capture or a refund, as a crash of the store
// would. It runs what Medusa's capture and refund workflows run first (the payment module's
// capturePayment and refundPayment), taking its task from PAYMENT_MODULE_TASK (JSON: databaseUrl,
// providerOptions, operation "capture" | "refund", paymentId, amount, and createdBy, who records it:
// the plugin's mark for the writes it records itself), and prints "done" or the error.
const { MedusaApp, ModulesDefinition } = require("@medusajs/framework/modules-sdk");
const {
  ContainerRegistrationKeys,
  createPgConnection,
  isSharedConnectionSymbol,
  Modules,
} = require("@medusajs/framework/utils");
const { MockEventBusService } = require("@medusajs/test-utils");

async function main() {
  const task = JSON.parse(process.env.PAYMENT_MODULE_TASK);
  const database = { clientUrl: task.databaseUrl, schema: "public" };
  const pg = createPgConnection(database);
  const modulesConfig = {
    [Modules.PAYMENT]: {
      definition: ModulesDefinition[Modules.PAYMENT],
      resolve: "@medusajs/medusa/payment",
      options: {
        database,
        [isSharedConnectionSymbol]: true,
        providers: [
          {
            resolve: "@purchase-auth/medusa/providers/purchase-auth",
            id: "purchase-auth",
            options: task.providerOptions,
          },
        ],
      },
    },
  };
  const app = await MedusaApp({
    modulesConfig,
    injectedDependencies: {
      [ContainerRegistrationKeys.PG_CONNECTION]: pg,
      [Modules.EVENT_BUS]: new MockEventBusService(),
      [ContainerRegistrationKeys.LOGGER]: console,
      [ContainerRegistrationKeys.CONFIG_MODULE]: { modules: modulesConfig },
    },
  });
  await app.onApplicationStart();
  const payment = app.modules[Modules.PAYMENT];
  process.stdout.write("ready\n");
  if (task.operation === "capture") {
    await payment.capturePayment({
      payment_id: task.paymentId,
      amount: task.amount,
      ...(task.createdBy ? { captured_by: task.createdBy } : {}),
    });
  } else {
    await payment.refundPayment({
      payment_id: task.paymentId,
      amount: task.amount,
      ...(task.createdBy ? { created_by: task.createdBy } : {}),
    });
  }
  process.stdout.write("done\n");
  process.exit(0);
}

main().catch((error) => {
  process.stdout.write(`failed: ${error?.message ?? error}\n`);
  process.exit(1);
});
