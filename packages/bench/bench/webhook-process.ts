import { startSandbox } from "@purchase-auth/sandbox";
import { cpuMicrosOfThisProcess, serveRpc } from "./child-rpc.js";

// Child-process entry of the webhook row: a sandbox whose merchant sends webhooks to the benchmark's
// receiver (argv[2]), with `count` (argv[3]) customer tokens. "burst" changes the status of every
// token in one turn of the event loop: `count` events in one batch, queued for the receiver at once.

const [receiverUrl, countText, concurrencyText] = process.argv.slice(2);
const count = Number(countText);
const sandbox = await startSandbox({
  // The delivery queue is bounded by the history: it must hold a whole burst.
  historyLimit: Math.max(10_000, count),
  webhookConcurrency: Number(concurrencyText),
});
const merchant = sandbox.createMerchant();
sandbox.setWebhooks({ merchantId: merchant.merchantId, urls: [String(receiverUrl)] });
const tokens = Array.from(
  { length: count },
  () => sandbox.createCustomerToken({ merchantId: merchant.merchantId }).customerToken,
);
let active = true;

serveRpc(
  sandbox.url,
  {
    burst: () => {
      active = !active;
      for (const token of tokens) sandbox.setCustomerTokenStatus(token, active ? "Active" : "Pending");
      return null;
    },
    /** Waits until every delivery has ended; the outcomes of the last burst's deliveries. */
    settle: async () => {
      await sandbox.settle();
      const outcomes: Record<string, number> = {};
      for (const delivery of sandbox.webhookDeliveries().slice(-count)) {
        outcomes[delivery.outcome] = (outcomes[delivery.outcome] ?? 0) + 1;
      }
      return outcomes;
    },
    cpuMicros: cpuMicrosOfThisProcess,
  },
  () => sandbox.close(),
);
