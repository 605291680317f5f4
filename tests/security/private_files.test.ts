/**
 * Keys and secrets on disk are the process user's alone whatever the umask: a real
 * `gatehouse run` on a `libsql` storage file, started under umask 022, issues a certificate
 * from its local CA; the reference app, under umask 022, writes its database and a mail blob.
 * Every file found is then 0600 (the database, its `-wal` and `-shm`, the blobs) and every
 * directory the process made 0700.
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

Deno.test({
  name:
    "libsql storage under umask 022: storage.db, -wal, -shm 0600 and its directories 0700 once a certificate is issued",
  ...opts,
  async fn() {
    const t = await tempEnv();
    const admin = freePort();
    const https = freePort();
    // the directory an operator gives it (private already); what the server makes inside is checked
    const store = `${t.dir}/store`;
    await Deno.mkdir(store, { mode: 0o700 });
    const config = {
      admin: { listen: `127.0.0.1:${admin}` },
      storage: { module: "libsql", url: `file:${store}/storage.db` },
      logging: { logs: { default: { level: "ERROR" } } },
      apps: {
        ...sites(https, ["private.localhost"], { automatic_https: { disable_redirects: true } }),
        tls: {
          automation: {
            policies: [{ subjects: ["private.localhost"], issuers: [{ module: "internal" }] }],
          },
        },
      },
    };
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
      env: t.env,
      cwd: t.dir,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    try {
      await up(`http://127.0.0.1:${admin}`);
      // the handshake gets a certificate of the local CA: its key and the CA's are stored
      await until(
        async () =>
          (await servedCert(https, "private.localhost"))?.names[0] === "private.localhost",
        30_000,
        "a certificate for private.localhost",
      );
      const found = await modes(store);
      for (const f of ["/storage.db", "/storage.db-wal", "/storage.db-shm"]) {
        assert.ok(found[f], `${f} exists: ${JSON.stringify(found)}`);
      }
      assert.deepEqual(found, expected(found));
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await child.stderr.cancel().catch(() => {});
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
