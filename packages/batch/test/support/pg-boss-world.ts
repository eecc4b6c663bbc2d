import PgBoss from "pg-boss";
import { afterAll, afterEach, beforeAll } from "vitest";
import { freshDatabase } from "./database.js";
import { clearFaults, openShop, type Shop } from "./sandbox.js";

type Database = Awaited<ReturnType<typeof freshDatabase>>;

/** One test file's world for pg-boss: a sandbox shop, a database, and the pg-boss instances it starts. */
export interface PgBossWorld {
  /** Set once the file's `beforeAll` has run. */
  readonly shop: Shop;
  readonly database: Database;
  /** A started pg-boss on the file's database (as another process would have), stopped after the file. */
  startedBoss(): Promise<PgBoss>;
  /** Runs `drop` after the file (a second database, say). */
  dropLater(drop: () => Promise<void>): void;
}

/**
 * Sets up, around one test file's tests, a sandbox shop (seeded with `seed`) and a fresh database;
 * clears the sandbox's faults after each test; stops every pg-boss it started and drops what it made
 * after the file.
 */
export function pgBossWorld(seed: number): PgBossWorld {
  let shop: Shop | undefined;
  let database: Database | undefined;
  const bosses: PgBoss[] = [];
  const drops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    shop = await openShop({}, seed);
    database = await freshDatabase();
  });
  afterEach(async () => {
    if (shop) await clearFaults(shop);
  });
  afterAll(async () => {
    await Promise.all(bosses.map((boss) => boss.stop({ graceful: false, wait: true })));
    await shop?.sandbox.close();
    for (const drop of drops) await drop();
    await database?.drop();
  });
  return {
    get shop() {
      return shop!;
    },
    get database() {
      return database!;
    },
    async startedBoss() {
      const boss = new PgBoss({ connectionString: database!.url, max: 4 });
      boss.on("error", () => {});
      await boss.start();
      bosses.push(boss);
      return boss;
    },
    dropLater(drop) {
      drops.push(drop);
    },
  };
}
