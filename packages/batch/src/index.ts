// Public surface of @purchase-auth/batch: merchant-initiated charges at scale.

export { BatchFatalError } from "./engine/classify.js";
export {
  DEFAULT_RETRY_DELAYS_MS,
  DEFAULT_SERVICE_SCHEDULE,
  type DeclinePolicy,
} from "./engine/decline-policy.js";
export type { EngineOptions } from "./engine/options.js";
export type { ChargeClient } from "./engine/process-item.js";
export type { ChargeItemSource } from "./engine/register.js";
export type { ChargeItem, ChargeOrder, ChargeSchedule } from "./items.js";
export { batchChargeKey } from "./keys.js";
export { type ChargeStoredTokenOptions, chargeStoredToken } from "./runners/charge-stored-token.js";
export {
  type BatchJobData,
  PgBossBatchQueue,
  type PgBossBatchQueueOptions,
  type PgBossLike,
  type WorkOptions,
} from "./runners/pg-boss.js";
export {
  type BatchProgress,
  type RunBatchOptions,
  type RunBatchResult,
  runBatch,
} from "./runners/run-batch.js";
export { MemoryBatchStore } from "./state/memory.js";
export {
  PostgresBatchStore,
  type PostgresBatchStoreOptions,
  type PostgresQueryable,
} from "./state/postgres.js";
export { BATCH_SCHEMA_SQL } from "./state/postgres-schema.js";
export {
  type AttemptLogEntry,
  type BatchItemRecord,
  type BatchStore,
  type ChargeResult,
  FINAL_STATUSES,
  type ItemChange,
  type ItemStatus,
  OPEN_STATUSES,
  type OpenItemView,
  type RegisterResult,
  type StatusCounts,
} from "./state/types.js";
export { type BatchSummary, summaryOf } from "./summary.js";
