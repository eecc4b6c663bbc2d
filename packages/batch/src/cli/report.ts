import type { BatchProgress, RunBatchResult } from "../runners/run-batch.js";

// What the CLI shows: a progress line on stderr while it runs and the report at the end. Counts,
// reasons and ids only: never a customer token, a secret or a connection string.

export function progressLine(progress: BatchProgress): string {
  const by = progress.counts.byStatus;
  const done = progress.counts.total - by.pending - by.sending - by.unknown - by.retry_scheduled;
  const seconds = Math.round(progress.elapsedMs / 1000);
  return [
    `${progress.batchId}: ${done}/${progress.counts.total} final`,
    `charged ${by.charged}`,
    // Accepted (202): the outcome comes by webhook, which the CLI never sees.
    `accepted ${by.accepted}`,
    `declined ${by.declined}`,
    `rejected ${by.rejected}`,
    `unknown ${by.unknown + by.sending}`,
    `retry later ${by.retry_scheduled}`,
    `review ${by.needs_review}`,
    `${progress.sentPerSecond.toFixed(1)} req/s`,
    `${seconds}s`,
  ].join(" | ");
}

/** A reporter that rewrites one line on a terminal, and writes a line every few seconds elsewhere. */
export function progressReporter(stream: NodeJS.WriteStream): {
  update(progress: BatchProgress): void;
  end(): void;
} {
  const tty = stream.isTTY === true;
  let lastLine = 0;
  let shown = false;
  return {
    update(progress) {
      const now = performance.now();
      if (!tty && now - lastLine < 5_000 && shown) return;
      lastLine = now;
      shown = true;
      stream.write(tty ? `\r\x1b[2K${progressLine(progress)}` : `${progressLine(progress)}\n`);
    },
    end() {
      if (tty && shown) stream.write("\n");
    },
  };
}

export function reportText(result: RunBatchResult): string {
  const lines = [
    `Batch ${result.batchId}: ${result.total} item(s), ${result.complete ? "complete" : "NOT complete"}`,
    `  charged          ${result.charged}${result.accepted > 0 ? ` (and ${result.accepted} accepted: outcome by webhook)` : ""}`,
    `  declined         ${result.declined.total}${reasons(result.declined.byReason)}`,
    `  rejected         ${result.rejected.total}${reasons(result.rejected.byReason)}`,
    `  unknown          ${result.unknown}${result.unknown > 0 ? " (run again with the same --batch-id: resent with the same keys)" : ""}`,
    `  retry scheduled  ${result.retryScheduled}${result.retryScheduled > 0 ? " (run again later with the same --batch-id)" : ""}`,
    `  not sent yet     ${result.pending}`,
    `  needs review     ${result.needsReview.total}${reasons(result.needsReview.byReason)}${result.needsReview.total > 0 ? " (outcome unknown past the key's window: look these up at the service)" : ""}`,
    `  requests sent by this run: ${result.sent}, in ${(result.elapsedMs / 1000).toFixed(1)} s`,
  ];
  return lines.join("\n");
}

function reasons(byReason: Record<string, number>): string {
  const entries = Object.entries(byReason).sort(([, a], [, b]) => b - a);
  return entries.length === 0 ? "" : `  (${entries.map(([reason, n]) => `${reason} ${n}`).join(", ")})`;
}

/** Whether the run left work for a later run (exit status 3). */
export function needsAnotherRun(result: RunBatchResult): boolean {
  return !result.complete || result.needsReview.total > 0;
}
