/**
 * `gatehouse trust` / `untrust` against a running server: after trust, curl (system store, no
 * -k) and headless Chromium (NSS database of a temporary HOME) reach https://localhost:PORT;
 * after untrust both fail again. The admin address comes from `--address`, or from the config
 * given with `--config` (JSON, or another format with `--adapter`). Errors: admin API
 * unreachable, unknown CA, no rights to the system store, `--address` with `--config`. The
 * test removes what it installs, whatever happens.
 */
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { startServer } from "../../../lib/server/embed.ts";
import { CLI, DENO_JSON, freePort } from "../fixtures/helpers.ts";

const CHROMIUM = "/usr/bin/chromium";
const have = (p: string) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
};
const READY = have(CHROMIUM) && have("/usr/sbin/update-ca-certificates") &&
  have("/usr/bin/certutil") &&
  Deno.uid() === 0;

async function cli(args: string[], env: Record<string, string>, perms = ["-A"]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...perms, "--config", DENO_JSON, CLI, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

async function curlNoK(url: string): Promise<{ code: number; body: string }> {
  const out = await new Deno.Command("curl", {
    args: ["-sS", "--max-time", "10", url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, body: new TextDecoder().decode(out.stdout) };
}

async function browse(url: string, home: string): Promise<string> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--no-first-run", "--disable-background-networking"],
    env: { ...Deno.env.toObject(), HOME: home },
  });
  try {
    const page = await browser.newPage();
    try {
      await page.goto(url, { timeout: 15_000 });
      return await page.innerText("body");
    } catch (e) {
      return `ERROR ${(e as Error).message.split("\n")[0]}`;
    }
  } finally {
    await browser.close();
  }
}

Deno.test({
  name:
    "trust / untrust: curl without -k and headless Chromium reach https://localhost:PORT after trust, fail after untrust",
  ignore: !READY,
  async fn() {
    const home = await Deno.makeTempDir({ prefix: "gatehouse-home-" });
    const storage = await Deno.makeTempDir({ prefix: "gatehouse-trust-" });
    const port = freePort();
    const srv = await startServer({
      adminAddress: "127.0.0.1:0",
      config: {
        storage: { module: "file_system", root: storage },
        apps: {
          http: {
            servers: {
              site: {
                listen: [`127.0.0.1:${port}`],
                automatic_https: { disable_redirects: true },
                routes: [{
                  match: [{ host: ["localhost"] }],
                  handle: [{ handler: "static_response", body: "trusted hello" }],
                }],
              },
            },
          },
        },
      },
    });
    const env = { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin" };
    const address = srv.adminAddress!;
    const rootFile = `${storage}/pki/authorities/local/root.crt`;
    const url = `https://localhost:${port}/`;
    try {
      assert.notEqual((await curlNoK(url)).code, 0, "not trusted before");

      // the admin address from a JSON config, and from a Gatehousefile named by --adapter
      await Deno.writeTextFile(`${home}/site.json`, JSON.stringify({ admin: { listen: address } }));
      await Deno.writeTextFile(`${home}/site.conf`, `{\n\tadmin ${address}\n}\n`);
      const t = await cli(["trust", "--config", `${home}/site.json`], env);
      assert.equal(t.code, 0, t.stderr);
      assert.match(t.stderr, /installed the root of CA local in: system, nss/);
      const ok = await curlNoK(url);
      assert.equal(ok.code, 0);
      assert.equal(ok.body, "trusted hello");
      assert.match(await browse(url, home), /trusted hello/);

      const u = await cli(
        ["untrust", "--config", `${home}/site.conf`, "--adapter", "gatehousefile"],
        env,
      );
      assert.equal(u.code, 0, u.stderr);
      assert.match(u.stderr, /removed the root of CA local from: system, nss/);
      assert.equal((await curlNoK(url)).code, 60, "curl: certificate problem again");
      assert.match(await browse(url, home), /^ERROR .*ERR_CERT_AUTHORITY_INVALID/);
      const again = await cli(["untrust", "--cert", rootFile], env);
      assert.equal(again.code, 0);
      assert.match(again.stderr, /was not installed in any trust store/);
      assert.ok(await Deno.stat(rootFile), "untrust leaves the storage alone");
    } finally {
      // whatever happened above, nothing stays installed
      await cli(["untrust", "--cert", rootFile], env);
      await srv.stop();
      await Deno.remove(home, { recursive: true });
      await Deno.remove(storage, { recursive: true });
    }
    assert.deepEqual(
      [...Deno.readDirSync("/usr/local/share/ca-certificates")].filter((e) =>
        e.name.startsWith("gatehouse-")
      ),
      [],
    );
  },
});

Deno.test("trust / untrust: clear errors for an unreachable admin API, an unknown CA, missing rights", async () => {
  const home = await Deno.makeTempDir({ prefix: "gatehouse-home-" });
  const storage = await Deno.makeTempDir({ prefix: "gatehouse-trust-" });
  const env = { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  const srv = await startServer({
    adminAddress: "127.0.0.1:0",
    config: { storage: { module: "file_system", root: storage } },
  });
  try {
    const dead = `127.0.0.1:${freePort()}`;
    let r = await cli(["trust", "--address", dead], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`connection refused at ${dead} \\(is the server running\\?`));
    assert.doesNotMatch(r.stderr, /fetch failed/);
    r = await cli(["trust", "--address", srv.adminAddress!, "--ca", "nope"], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /answered 404: no certificate authority configured with id: nope/);
    // the same server reached through the admin address of a config file
    const json = `${home}/admin.json`;
    const conf = `${home}/admin.conf`;
    await Deno.writeTextFile(json, JSON.stringify({ admin: { listen: srv.adminAddress } }));
    await Deno.writeTextFile(conf, `{\n\tadmin ${srv.adminAddress}\n}\n`);
    for (
      const args of [
        ["--config", json],
        ["-c", conf, "--adapter", "gatehousefile"],
      ]
    ) {
      for (const command of ["trust", "untrust"]) {
        r = await cli([command, ...args, "--ca", "nope"], env);
        assert.equal(r.code, 1, args.join(" "));
        assert.match(
          r.stderr,
          new RegExp(`admin endpoint ${srv.adminAddress} answered 404: no certificate authority`),
        );
      }
    }
    // a Gatehousefile read as JSON (no --adapter) is an error about the file, not a request
    r = await cli(["trust", "--config", conf], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /admin\.conf/);
    assert.doesNotMatch(r.stderr, /admin endpoint/);
    r = await cli(["trust", "--address", srv.adminAddress!, "--config", json], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /use --address or --config, not both/);
    // without the right to write the stores (here: no --allow-write), nothing is installed
    r = await cli(["trust", "--address", srv.adminAddress!], env, [
      "--allow-net",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      "--allow-sys",
      "--allow-ffi",
    ]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /permission denied; the system trust store needs root \(run the command with sudo\)/,
    );
    assert.deepEqual(
      [...Deno.readDirSync("/usr/local/share/ca-certificates")].filter((e) =>
        e.name.startsWith("gatehouse-")
      ),
      [],
    );
    r = await cli(["untrust", "--cert", `${storage}/missing.crt`], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /reading .*missing\.crt/);
  } finally {
    await srv.stop();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(storage, { recursive: true });
  }
});
