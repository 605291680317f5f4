import assert from "node:assert/strict";
import { SCHEMA_SQL, splitStatements } from "../../d1.ts";

const root = new URL("../../", import.meta.url);

/** The sqlite3 shell is a system program (`apt-get install sqlite3`); without it that test is ignored. */
const HAVE_SQLITE3 = await new Deno.Command("sqlite3", {
  args: ["-version"],
  stdout: "null",
  stderr: "null",
})
  .output().then((o) => o.success, () => false);

Deno.test("schema.sql at the root is the embedded SCHEMA_SQL; every statement is IF NOT EXISTS", async () => {
  const file = await Deno.readTextFile(new URL("schema.sql", root));
  assert.equal(file, SCHEMA_SQL);
  const statements = splitStatements(file);
  assert.equal(statements.length, 22);
  for (const s of statements) assert.match(s, /^CREATE (UNIQUE )?(TABLE|INDEX) IF NOT EXISTS /);
});

Deno.test({
  name: "schema.sql runs twice through the sqlite3 shell",
  ignore: !HAVE_SQLITE3,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      for (let i = 0; i < 2; i++) {
        const out = await new Deno.Command("sqlite3", {
          args: [`${dir}/s.db`, `.read ${new URL("schema.sql", root).pathname}`],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      }
      const out = await new Deno.Command("sqlite3", {
        args: [`${dir}/s.db`, ".tables"],
        stdout: "piped",
      }).output();
      assert.deepEqual(
        new TextDecoder().decode(out.stdout).split(/\s+/).filter(Boolean).sort(),
        [
          "auth_events",
          "auth_throttle",
          "backup_codes",
          "oauth_identities",
          "otp_codes",
          "passkey_challenges",
          "passkeys",
          "revoked_sessions",
          "totp_factors",
          "trusted_devices",
          "user_sessions",
          "users",
        ],
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
