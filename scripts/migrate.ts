/** `npm run db:migrate`: applies the drizzle migrations to DATABASE_URL (file:, http(s)://, libsql://). */
import { migrateDb } from "../functions/db/migrate.ts";
import { databaseUrl, openDatabase } from "../functions/db/open.ts";

const client = openDatabase();
try {
  await migrateDb(client);
  console.log(`migrations applied to ${databaseUrl().replace(/\/\/[^@/]*@/, "//")}`);
} catch (e) {
  console.error(`migration failed: ${(e as Error).message}`);
  process.exitCode = 1;
} finally {
  client.close();
}
