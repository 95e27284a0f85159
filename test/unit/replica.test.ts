/** Issue 9 B.7: which statements a replica server may answer locally, and its settings (the topology is in test/e2e/replica.test.ts). */
import { describe, expect, it } from "vitest";
import { readsOnly, replicaConfig } from "../../functions/db/replica.ts";
import { SettingsError } from "../../functions/lib/settings.ts";

describe("a replica server's routing", () => {
  it.each([
    ["SELECT 1", true],
    ['  select "id" from "user"', true],
    ["WITH t AS (SELECT 1) SELECT * FROM t", true],
    ["EXPLAIN QUERY PLAN SELECT 1", true],
    ["PRAGMA table_info(user)", true],
    ["INSERT INTO user (name) VALUES ('x')", false],
    ["WITH t AS (SELECT 1) INSERT INTO x SELECT * FROM t", false],
    ["WITH t AS (SELECT 1) DELETE FROM x", false],
    ["UPDATE user SET name = 'x'", false],
    ["PRAGMA foreign_keys = on", false],
    ["CREATE TABLE x (a)", false],
    ["BEGIN", false],
  ])("B.7 %j is answered locally: %s (anything in doubt goes to the primary)", (sql, local) => {
    expect(readsOnly(sql)).toBe(local);
  });
});

describe("replica settings", () => {
  it("B.7 no DATABASE_REPLICA_PATH, no replica", () => {
    expect(replicaConfig({ DATABASE_URL: "http://127.0.0.1:8080" })).toBeNull();
  });

  it("B.7 DATABASE_REPLICA_PATH with a primary; the sync interval is a Go duration, 1s by default, 0 for off", () => {
    expect(replicaConfig({ DATABASE_URL: "libsql://db-org.turso.io", DATABASE_AUTH_TOKEN: "t", DATABASE_REPLICA_PATH: "/srv/replica.db" })).toEqual({
      primaryUrl: "libsql://db-org.turso.io",
      authToken: "t",
      path: "/srv/replica.db",
      syncIntervalMs: 1000,
    });
    expect(replicaConfig({ DATABASE_URL: "https://sqld.internal", DATABASE_REPLICA_PATH: "/r.db", DATABASE_REPLICA_SYNC_INTERVAL: "0" })?.syncIntervalMs).toBe(0);
    expect(replicaConfig({ DATABASE_URL: "https://sqld.internal", DATABASE_REPLICA_PATH: "/r.db", DATABASE_REPLICA_SYNC_INTERVAL: "250ms" })?.syncIntervalMs).toBe(250);
  });

  it.each([
    [{ DATABASE_REPLICA_PATH: "/r.db" }, "DATABASE_REPLICA_PATH"],
    [{ DATABASE_URL: "file:/srv/gitea.db", DATABASE_REPLICA_PATH: "/r.db" }, "DATABASE_REPLICA_PATH"],
    [{ DATABASE_URL: "http://127.0.0.1:8080", DATABASE_REPLICA_PATH: "/r.db", DATABASE_REPLICA_SYNC_INTERVAL: "soon" }, "DATABASE_REPLICA_SYNC_INTERVAL"],
  ])("B.7 an invalid replica setting stops start-up naming the variable (%j)", (env, name) => {
    expect(() => replicaConfig(env)).toThrow(SettingsError);
    expect(() => replicaConfig(env)).toThrow(name);
  });
});
