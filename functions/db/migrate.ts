/** Applies the drizzle migrations in `drizzle/` to a libSQL database (Node: start-up, CLI, `npm run db:migrate`). */
import type { Client } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import { fileURLToPath } from "node:url";

export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../drizzle", import.meta.url));

export async function migrateDb(client: Client): Promise<void> {
  await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
}
