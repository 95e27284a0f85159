import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "turso",
  schema: "./functions/db/schema.ts",
  // DRIZZLE_OUT: scripts/check-generated.ts regenerates into a copy to compare.
  out: process.env.DRIZZLE_OUT ?? "./drizzle",
  dbCredentials: { url: process.env.DATABASE_URL ?? "file:./data/gitea.db" },
});
