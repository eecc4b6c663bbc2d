import { afterAll } from "vitest";
import { type BatchStore, MemoryBatchStore } from "../../src/index.js";
import { freshDatabase } from "./database.js";

/** The stores every behaviour is checked with: in memory, and in a real PostgreSQL. */
export const STORES: ReadonlyArray<{ name: string; open(): Promise<BatchStore> }> = [
  { name: "memory", open: async () => new MemoryBatchStore() },
  {
    name: "postgres",
    async open() {
      const database = await freshDatabase();
      afterAll(() => database.drop());
      return database.store;
    },
  },
];
