/**
 * A key in one step, as a newcomer meets it: `deno task mail` and `deno task start` as real
 * processes; everything the test uses comes from what they printed.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { startAppProcess } from "../e2e/_process.ts";
import { loadAppEnv } from "../../app/env.ts";
import { mailSandboxLines } from "../../app/mail.ts";
import { MailroomClient } from "../../mail.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The printed sandbox facts, read from the output alone. */
function printed(out: string) {
  const field = (name: string) => out.match(new RegExp(`${name}:\\s+(\\S+)`))?.[1];
  return {
    key: field("sandbox API key"),
    account: field("sandbox account"),
    address: field("sandbox address"),
    items: Number(out.match(/sandbox address:\s+\S+\s+\((\d+) items\)/)?.[1]),
    reference: field("reference"),
    curl: out.match(/^curl .*$/m)?.[0],
  };
}

/** Runs `deno task mail` on a fresh database until its curl line; returns the output. */
async function startStandalone(dir: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "mail"],
    cwd: ROOT,
    env: {
      PORT: "0",
      MAIL_DB: `file:${dir}/mail.db`,
      MAIL_BLOB_DIR: `${dir}/blobs`,
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/^curl .*$/m.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`deno task mail exited early:\n${out}`);
    out += value;
  }
  return {
    out,
    async stop() {
      child.kill("SIGTERM");
      await reader.cancel();
      await child.status;
    },
  };
}

Deno.test("newcomer: from `deno task mail`'s output alone, the first GET /items returns items", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-mail-standalone-" });
  const run = await startStandalone(dir);
  try {
    const p = printed(run.out);
    assert.match(p.key ?? "", /^gh_test_/);
    assert.equal(p.items, 3);
    // the printed curl command, as printed
    const curl = await new Deno.Command("sh", { args: ["-c", p.curl!], stdout: "piped" }).output();
    assert.equal(curl.code, 0);
    const body = JSON.parse(new TextDecoder().decode(curl.stdout));
    assert.equal(body.total, 3);
    assert.deepEqual(body.data.map((i: { address_id: string }) => i.address_id), [
      p.address,
      p.address,
      p.address,
    ]);
    assert.ok(body.data.every((i: { current_status: string }) => i.current_status === "received"));
    // the printed reference address serves the page and its scripts
    const page = await fetch(p.reference!);
    assert.equal(page.status, 200);
    const html = await page.text();
    for (const src of html.matchAll(/<script src="([^"]+)"/g)) {
      const r = await fetch(new URL(src[1], p.reference!));
      assert.equal(r.status, 200, src[1]);
      assert.match(r.headers.get("content-type") ?? "", /javascript/);
      await r.body?.cancel();
    }
  } finally {
    await run.stop();
  }
  // a second start reuses the account and its items, with a new key that works; the first
  // start's key is revoked, so keys do not pile up
  const again = await startStandalone(dir);
  try {
    const first = printed(run.out), second = printed(again.out);
    assert.equal(second.account, first.account);
    assert.equal(second.items, 3);
    assert.notEqual(second.key, first.key);
    const base = second.reference!.replace(/\/docs$/, "");
    const r = await fetch(`${base}/items`, { headers: { "x-api-key": second.key! } });
    assert.equal((await r.json()).total, 3);
    const old = await fetch(`${base}/items`, { headers: { "x-api-key": first.key! } });
    assert.deepEqual([old.status, (await old.json()).code], [401, 431]);
    const token = again.out.match(/operator token:\s+(\S+)/)![1];
    const ops = new MailroomClient({ baseUrl: base, operatorToken: token });
    const keys = (await ops.getAccount(second.account!)).api_keys;
    assert.deepEqual(keys.map((k) => [k.prefix, k.revoked_at !== null]), [
      [first.key!.slice(0, 12), true],
      [second.key!.slice(0, 12), false],
    ]);
  } finally {
    await again.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("newcomer: `deno task start` prints a ready sandbox key whose GET /items returns items", async () => {
  const app = await startAppProcess();
  try {
    const out = app.output();
    const p = printed(out);
    assert.match(p.key ?? "", /^gh_test_/);
    assert.equal(p.items, 3);
    assert.ok(p.reference!.startsWith(`http://127.0.0.1:${app.port}/api/account-docs/v2/`));
    const curl = await new Deno.Command("sh", { args: ["-c", p.curl!], stdout: "piped" }).output();
    const body = JSON.parse(new TextDecoder().decode(curl.stdout));
    assert.equal(body.total, 3);
    assert.equal(body.data[0].address_id, p.address);
  } finally {
    await app.close();
  }
});

Deno.test("production: no sandbox is made and no key printed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-mail-prod-" });
  try {
    const env = loadAppEnv({
      MODE: "production",
      APP_URL: "https://mail.example",
      DATABASE_URL: `file:${dir}/app.db`,
      MAIL_BLOB_DIR: `${dir}/blobs`,
    });
    assert.deepEqual(await mailSandboxLines(env, "https://mail.example"), []);
    const db = createClient({ url: `file:${dir}/app.db` });
    const tables = await db.execute("SELECT name FROM sqlite_master WHERE name = 'mail_accounts'");
    const accounts = tables.rows.length
      ? Number((await db.execute("SELECT count(*) AS n FROM mail_accounts")).rows[0].n)
      : 0;
    db.close();
    assert.equal(accounts, 0);
    // the same call in development does make one (so the check above can fail)
    const dev = loadAppEnv({ DATABASE_URL: `file:${dir}/dev.db`, MAIL_BLOB_DIR: `${dir}/blobs` });
    assert.match((await mailSandboxLines(dev, "http://127.0.0.1:8000")).join("\n"), /gh_test_/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
