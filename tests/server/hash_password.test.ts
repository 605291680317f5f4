/**
 * `hash-password` prints what Caddy 2.6.2's prints (raw bcrypt hash; base64 scrypt key), and
 * `basic_auth` (`http_basic`) accepts what it prints, with both algorithms, as well as Caddy's
 * own hashes and the older base64-wrapped bcrypt form.
 */
import assert from "node:assert/strict";
import { startServer } from "../../admin.ts";
import { freePort, runCli, tempEnv } from "./fixtures/helpers.ts";

const QUIET = { logs: { default: { writer: { output: "discard" } } } };

async function caddy(args: string[], env: Record<string, string>): Promise<string> {
  const out = await new Deno.Command("caddy", { args, env, stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

/**
 * Serves a site behind `http_basic` with `hash` and `accounts`, and hands `fn` a function that
 * answers the status of a request with the given credentials.
 */
async function withSite(
  hash: Record<string, unknown>,
  accounts: Record<string, unknown>[],
  fn: (login: (user: string, pass: string) => Promise<number>) => Promise<void>,
) {
  const port = freePort();
  const s = await startServer({
    config: {
      logging: QUIET,
      apps: {
        http: {
          servers: {
            s: {
              listen: [`127.0.0.1:${port}`],
              routes: [{
                handle: [
                  { handler: "authentication", providers: { http_basic: { hash, accounts } } },
                  { handler: "static_response", body: "in" },
                ],
              }],
            },
          },
        },
      },
    },
  });
  try {
    await fn(async (user, pass) => {
      const r = await fetch(`http://127.0.0.1:${port}/`, {
        headers: { authorization: `Basic ${btoa(`${user}:${pass}`)}` },
      });
      await r.body?.cancel();
      return r.status;
    });
  } finally {
    await s.stop();
  }
}

Deno.test("hash-password prints a raw bcrypt hash as Caddy 2.6.2; basic_auth accepts it, base64-wrapped ones and Caddy's", async () => {
  const t = await tempEnv();
  try {
    const ours = await runCli(["hash-password", "--plaintext", "hunter2"], t.env);
    assert.equal(ours.code, 0, ours.out);
    const theirs = await caddy(["hash-password", "--plaintext", "hunter2"], t.env);
    const shape = /^\$2[ab]\$14\$[./A-Za-z0-9]{53}\n$/;
    assert.match(theirs, shape, "caddy's output");
    assert.match(ours.stdout, shape, "the same shape: one raw bcrypt hash line");
    const hash = ours.stdout.trim();
    await withSite({ algorithm: "bcrypt" }, [
      { username: "ann", password: hash },
      { username: "bob", password: btoa(hash) },
      { username: "cat", password: theirs.trim() },
    ], async (login) => {
      assert.equal(await login("ann", "hunter2"), 200);
      assert.equal(await login("ann", "hunter3"), 401);
      assert.equal(await login("bob", "hunter2"), 200);
      assert.equal(await login("cat", "hunter2"), 200);
    });
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("hash-password -a scrypt prints Caddy 2.6.2's key; basic_auth with scrypt accepts it", async () => {
  const t = await tempEnv();
  try {
    for (const extra of [["--salt", "saltsalt"], []]) {
      const ours = await runCli(
        ["hash-password", "-p", "hunter2", "-a", "scrypt", ...extra],
        t.env,
      );
      assert.equal(ours.code, 0, ours.out);
      const theirs = await caddy(
        ["hash-password", "--plaintext", "hunter2", "--algorithm", "scrypt", ...extra],
        t.env,
      );
      assert.equal(ours.stdout, theirs, `same bytes as caddy ${extra.join(" ")}`);
    }
    const key = (await runCli(
      ["hash-password", "-p", "hunter2", "--algorithm", "scrypt", "--salt", "saltsalt"],
      t.env,
    )).stdout.trim();
    await withSite({ algorithm: "scrypt" }, [
      { username: "ann", password: key, salt: btoa("saltsalt") },
    ], async (login) => {
      assert.equal(await login("ann", "hunter2"), 200);
      assert.equal(await login("ann", "hunter3"), 401);
      assert.equal(await login("zed", "hunter2"), 401);
    });
    // the parameters are Caddy's fields; a wrong salt never matches
    await withSite({ algorithm: "scrypt", N: 32768, r: 8, p: 1, key_length: 32 }, [
      { username: "ann", password: key, salt: btoa("other") },
    ], async (login) => {
      assert.equal(await login("ann", "hunter2"), 401);
    });
    const bad = await runCli(["hash-password", "-p", "x", "-a", "md5"], t.env);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /unrecognized hash algorithm: md5/);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});
