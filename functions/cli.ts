/**
 * The admin CLI, like `gitea admin user …`, against the same DATABASE_URL as the server, whether
 * or not a server is running and whether or not the database exists yet (it migrates first):
 *
 *   npm run admin -- user create --username U --password P --email E [--admin] [--must-change-password=false]
 *   npm run admin -- user generate-access-token --username U [--token-name N] [--scopes all] [--raw]
 *   npm run admin -- user list
 *
 * Start-up never creates an account by itself; this is how the first one is made.
 */
import { parseArgs } from "node:util";
import { count, eq, sql } from "drizzle-orm";
import { createDb, uniqueViolation } from "./db/client.ts";
import { clientDriver } from "./db/driver.ts";
import { migrateDb } from "./db/migrate.ts";
import { openDatabase } from "./db/open.ts";
import { accessToken, emailAddress, user } from "./db/schema.ts";
import { normalizeScope } from "./lib/auth.ts";
import { hashPassword, newToken, tokenHash } from "./lib/crypto.ts";
import { loadSettings } from "./lib/settings.ts";
import { checkUsableUsername } from "./services/common.ts";
import { CreateUserOptionSchema } from "./wire/user.ts";

const USAGE = `usage:
  admin user create --username NAME --password PASS --email EMAIL [--admin] [--must-change-password=BOOL] [--restricted] [--access-token] [--access-token-scopes SCOPES]
  admin user generate-access-token --username NAME [--token-name NAME] [--scopes SCOPES] [--raw]
  admin user list`;

class CliError extends Error {}

const boolFlag = (v: string | boolean | undefined, name: string): boolean | undefined => {
  if (v === undefined) return undefined;
  if (v === true || v === "true" || v === "1") return true;
  if (v === false || v === "false" || v === "0") return false;
  throw new CliError(`--${name} must be true or false`);
};

async function main(argv: string[]) {
  const [group, command, ...rest] = argv;
  if (group !== "user" || !command) throw new CliError(USAGE);
  const { values } = parseArgs({
    // Boolean flags accept both `--admin` and `--admin=false`, as Gitea's CLI does.
    args: rest.map((a) => (/^--(must-change-password|admin|restricted)$/.test(a) ? `${a}=true` : a)),
    options: {
      username: { type: "string" },
      password: { type: "string" },
      email: { type: "string" },
      admin: { type: "string" },
      "must-change-password": { type: "string" },
      restricted: { type: "string" },
      "access-token": { type: "boolean" },
      "access-token-scopes": { type: "string" },
      "token-name": { type: "string" },
      scopes: { type: "string" },
      raw: { type: "boolean" },
    },
    allowPositionals: false,
    strict: true,
  });
  const settings = loadSettings(process.env);
  const client = openDatabase();
  try {
    await migrateDb(client);
    const db = createDb(clientDriver(client));
    if (command === "list") {
      const rows = await db.select().from(user).where(eq(user.type, 0));
      console.log("ID\tUsername\tEmail\tIsActive\tIsAdmin");
      for (const u of rows) console.log(`${u.id}\t${u.name}\t${u.email}\t${u.isActive}\t${u.isAdmin}`);
      return;
    }
    if (!values.username) throw new CliError("--username is required");
    if (command === "create") {
      const parsed = CreateUserOptionSchema.safeParse({ username: values.username, email: values.email, password: values.password });
      if (!parsed.success) throw new CliError(`invalid input: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
      checkUsableUsername(values.username);
      if (!values.password || values.password.length < settings.security.minPasswordLength) {
        throw new CliError(`--password is required and must be at least ${settings.security.minPasswordLength} characters`);
      }
      const isAdmin = boolFlag(values.admin, "admin") ?? false;
      // As Gitea: the first user does not have to change the password; others do unless told otherwise.
      const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(user).where(eq(user.type, 0)); // COUNT(*) answers one row
      const mustChange = boolFlag(values["must-change-password"], "must-change-password") ?? n > 0;
      const lower = values.username.toLowerCase();
      const passwd = await hashPassword(values.password, settings.security.passwordHashIterations);
      try {
        await db.batch([
          db.insert(user).values({
            name: values.username,
            lowerName: lower,
            email: values.email!,
            passwd,
            passwdHashAlgo: "pbkdf2_sha256",
            mustChangePassword: mustChange,
            isAdmin,
            isActive: true,
            isRestricted: boolFlag(values.restricted, "restricted") ?? false,
          }),
          db.insert(emailAddress).values({ uid: sql`(SELECT id FROM user WHERE lower_name = ${lower})`, email: values.email!, lowerEmail: values.email!.toLowerCase(), isActivated: true, isPrimary: true }),
        ]);
      } catch (e) {
        const v = uniqueViolation(e);
        if (v?.includes("user.lower_name")) throw new CliError(`user already exists [name: ${values.username}]`);
        if (v?.includes("email_address")) throw new CliError(`e-mail already in use [email: ${values.email}]`);
        throw e;
      }
      if (values["access-token"]) {
        const token = await createToken(db, lower, "gitea-admin", values["access-token-scopes"] ?? "all");
        console.log(`Access token was successfully created... ${token}`);
      }
      console.log(`New user '${values.username}' has been successfully created!`);
      return;
    }
    if (command === "generate-access-token") {
      const token = await createToken(db, values.username.toLowerCase(), values["token-name"] ?? "gitea-admin", values.scopes ?? "all");
      console.log(values.raw ? token : `Access token was successfully created: ${token}`);
      return;
    }
    throw new CliError(USAGE);
  } finally {
    client.close();
  }
}

async function createToken(db: ReturnType<typeof createDb>, lower: string, name: string, scopes: string) {
  const [owner] = await db.select().from(user).where(eq(user.lowerName, lower));
  if (!owner || owner.type !== 0) throw new CliError(`user does not exist [name: ${lower}]`);
  let scope: string;
  try {
    scope = normalizeScope(scopes.split(","));
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  if (!scope) throw new CliError("access token must have a scope");
  const token = newToken();
  try {
    await db.insert(accessToken).values({ uid: owner.id, name, tokenHash: await tokenHash(token), tokenLastEight: token.slice(-8), scope });
  } catch (e) {
    if (uniqueViolation(e)) throw new CliError(`access token name has been used already [name: ${name}]`);
    throw e;
  }
  return token;
}

main(process.argv.slice(2)).catch((e) => {
  const parseError = e instanceof Error && String((e as { code?: unknown }).code ?? "").startsWith("ERR_PARSE_ARGS");
  console.error(e instanceof CliError || parseError || (e instanceof Error && e.constructor.name === "SettingsError") ? (e as Error).message : e);
  if (parseError) console.error(USAGE);
  process.exit(1);
});
