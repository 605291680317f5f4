/**
 * Keys and secrets on disk are the process user's alone whatever the umask: a real
 * `gatehouse run` on a `libsql` storage file in a directory that does not exist yet, started
 * under umask 022, issues a certificate from its local CA; the reference app, under umask 022,
 * writes its database and a mail blob. Every file found is then 0600 (the database, its `-wal`
 * and `-shm`, the blobs) and every directory the process made 0700. An operator's directory
 * that others may read is left as it is, and the libsql storage warns about it.
 */
import assert from "node:assert/strict";
import { MailroomClient } from "../../mail.ts";
import { CLI, DENO_JSON, freePort, tempEnv, until } from "../server/fixtures/helpers.ts";
import { up } from "../server/fixtures/process.ts";
import { servedCert, sites } from "../server/tls/_helpers.ts";
import { startAppProcess } from "../e2e/_process.ts";
import { PNG } from "../mail/_harness.ts";
import { openLibsqlStorage } from "../../lib/server/storage/libsql.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** Every entry under `root` (itself included) with its permission bits, as `path: mode`. */
async function modes(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string) => {
    const s = await Deno.lstat(path);
    out[path.slice(root.length) || "/"] = `${s.isDirectory ? "dir" : "file"} ` +
      (s.mode! & 0o777).toString(8).padStart(4, "0");
    if (s.isDirectory) {
      for await (const e of Deno.readDir(path)) {
        await walk(`${path}/${e.name}`);
      }
    }
  };
  await walk(root);
  return out;
}

/** What every entry must be: files 0600, directories 0700. */
function expected(found: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(found).map(([p, m]) => [p, m.startsWith("dir") ? "dir 0700" : "file 0600"]),
  );
}

/** The message the libsql storage warns with about a directory others may read or write. */
const SHARED_DIR_WARNING =
  "the storage database's directory may be read or written by group or others";

/**
 * A `gatehouse run` of `config` started under umask 022 (its log at WARN and above on stderr):
 * `fn` runs while it serves, then it is stopped and its stderr returned.
 */
async function runUnderUmask022(
  t: { dir: string; env: Record<string, string> },
  config: Record<string, unknown>,
  fn: () => Promise<void>,
): Promise<string> {
  await Deno.writeTextFile(`${t.dir}/config.json`, JSON.stringify(config));
  const child = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'umask 022; exec "$0" "$@"',
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      DENO_JSON,
      CLI,
      "run",
      "-c",
      `${t.dir}/config.json`,
    ],
    env: { ...t.env, GATEHOUSE_WORKERS: "1" }, // one process: one provision
    cwd: t.dir,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    await fn();
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
  return await stderr;
}

Deno.test({
  name:
    "libsql storage under umask 022: the directories it makes are 0700 and storage.db, -wal, -shm 0600 once a certificate is issued",
  ...opts,
  async fn() {
    const t = await tempEnv();
    const admin = freePort();
    const https = freePort();
    // two levels that do not exist yet: the server makes them
    const state = `${t.dir}/state`;
    const store = `${state}/store`;
    const config = {
      admin: { listen: `127.0.0.1:${admin}` },
      storage: { module: "libsql", url: `file:${store}/storage.db` },
      logging: { logs: { default: { level: "WARN" } } },
      apps: {
        ...sites(https, ["private.localhost"], { automatic_https: { disable_redirects: true } }),
        tls: {
          automation: {
            policies: [{ subjects: ["private.localhost"], issuers: [{ module: "internal" }] }],
          },
        },
      },
    };
    try {
      let found: Record<string, string> = {};
      const stderr = await runUnderUmask022(t, config, async () => {
        await up(`http://127.0.0.1:${admin}`);
        // the handshake gets a certificate of the local CA: its key and the CA's are stored
        await until(
          async () =>
            (await servedCert(https, "private.localhost"))?.names[0] === "private.localhost",
          30_000,
          "a certificate for private.localhost",
        );
        found = await modes(state);
      });
      for (const f of ["/store/storage.db", "/store/storage.db-wal", "/store/storage.db-shm"]) {
        assert.ok(found[f], `${f} exists: ${JSON.stringify(found)}`);
      }
      assert.equal(found["/"], "dir 0700");
      assert.equal(found["/store"], "dir 0700");
      assert.deepEqual(found, expected(found));
      // a directory it made is private: nothing to warn about
      assert.ok(!stderr.includes(SHARED_DIR_WARNING), stderr);
    } finally {
      await Deno.remove(t.dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "libsql storage under umask 022: an existing 0755 directory keeps its mode and is warned about once at provision, with its path and mode",
  ...opts,
  async fn() {
    const t = await tempEnv();
    const admin = freePort();
    // the operator's directory, readable by everyone
    const shared = `${t.dir}/shared`;
    await Deno.mkdir(shared);
    await Deno.chmod(shared, 0o755);
    const config = {
      admin: { listen: `127.0.0.1:${admin}` },
      storage: { module: "libsql", url: `file:${shared}/storage.db` },
      logging: { logs: { default: { level: "WARN" } } },
    };
    try {
      let found: Record<string, string> = {};
      const stderr = await runUnderUmask022(t, config, async () => {
        await up(`http://127.0.0.1:${admin}`);
        found = await modes(shared);
      });
      const warnings = stderr.split("\n").filter((l) => l.includes(SHARED_DIR_WARNING));
      assert.equal(warnings.length, 1, stderr);
      const entry = JSON.parse(warnings[0]);
      assert.equal(entry.level, "warn");
      assert.equal(entry.logger, "caddy.storage.libsql");
      assert.equal(entry.path, shared);
      assert.equal(entry.mode, "0755");
      // not chmod'ed: the directory is the operator's; the database in it is private all the same
      assert.equal(found["/"], "dir 0755");
      assert.equal(found["/storage.db"], "file 0600");
    } finally {
      await Deno.remove(t.dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "the reference app under umask 022: its database (with -wal and -shm) and mail blobs 0600, the directories it made 0700",
  ...opts,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-private-" });
    const data = `${dir}/data`; // made by the app
    const operatorToken = "private-files-operator-token-0123456789";
    const app = await startAppProcess({
      DATABASE_URL: `file:${data}/gatehouse.db`,
      MAIL_BLOB_DIR: `${data}/mail-blobs`,
      MAIL_OPERATOR_TOKEN: operatorToken,
    }, { umask: "022" });
    try {
      const ops = new MailroomClient({
        baseUrl: `http://127.0.0.1:${app.port}/api/account-docs/v2`,
        operatorToken,
      });
      const { account_id } = await ops.createAccount({ name: "Private Co" });
      const { user_id } = await ops.createUser(account_id, "Pat");
      const { address_id } = await ops.createAddress(account_id, user_id);
      await ops.createApiKey(account_id, "crm");
      await ops.receiveItem({
        address_id,
        sender_name: "Bank",
        envelope: new Blob([PNG], { type: "image/png" }),
      });
      const found = await modes(data);
      for (const f of ["/gatehouse.db", "/gatehouse.db-wal", "/gatehouse.db-shm"]) {
        assert.ok(found[f], `${f} exists: ${JSON.stringify(found)}`);
      }
      assert.ok(
        Object.keys(found).some((p) => p.startsWith("/mail-blobs/covers/")),
        `an envelope image was written: ${JSON.stringify(found)}`,
      );
      assert.deepEqual(found, expected(found));
    } finally {
      await app.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test("libsql storage: an existing database and -wal made 0644 before are set to 0600 when opened", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-private-" });
  try {
    for (const f of ["old.db", "old.db-wal"]) {
      await Deno.writeFile(`${dir}/${f}`, new Uint8Array());
      await Deno.chmod(`${dir}/${f}`, 0o644);
    }
    const old = await openLibsqlStorage({ url: `file:${dir}/old.db` });
    await old.store("pki/authorities/local/root.key", new TextEncoder().encode("KEY"));
    const found = await modes(dir);
    await old.cleanup?.();
    assert.ok(found["/old.db-wal"] && found["/old.db-shm"], JSON.stringify(found));
    assert.deepEqual(found, expected(found));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
