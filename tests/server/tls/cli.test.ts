/**
 * The certificate rules of the quick servers: `reverse-proxy --from localhost:PORT` is HTTPS
 * with a certificate from the local CA, `http://` is plain, a public name gets its certificate
 * from the ACME issuer (or the local CA with `--internal-certs`), as does `file-server
 * --domain` with a public name; neither ever falls back to plain HTTP.
 */
import assert from "node:assert/strict";
import { CLI, DENO_JSON } from "../fixtures/helpers.ts";
import { reverseProxyConfig } from "../../../lib/cli/reverse_proxy.ts";
import { curl, freePort } from "./_helpers.ts";

function spawn(args: string[], data: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", DENO_JSON, CLI, ...args],
    env: { XDG_DATA_HOME: data, XDG_CONFIG_HOME: data },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const err = new Response(child.stderr).text();
  return {
    child,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* exited */ }
      return { status: await child.status, stderr: await err };
    },
    async exited() {
      return { status: await child.status, stderr: await err };
    },
  };
}

async function until(fn: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("server did not come up");
}

Deno.test("reverse-proxy: localhost:PORT is HTTPS from the local CA; http:// is plain; a public name gets ACME, or the local CA with --internal-certs", async () => {
  const data = await Deno.makeTempDir({ prefix: "gatehouse-cli-tls-" });
  const up = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("upstream"),
  );
  const to = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  try {
    const port = freePort();
    let p = spawn([
      "reverse-proxy",
      "--from",
      `localhost:${port}`,
      "--to",
      to,
      "--disable-redirects",
    ], data);
    const ca = `${data}/gatehouse/pki/authorities/local/root.crt`;
    try {
      await until(async () => (await curl(`https://localhost:${port}/`, { ca })).code === 0);
      const r = await curl(`https://localhost:${port}/`, { ca });
      assert.equal(r.body, "upstream");
      const plainTry = await curl(`http://localhost:${port}/`);
      assert.notEqual(plainTry.body, "upstream", "no plain HTTP on it");
      assert.notEqual(plainTry.status, 200);
    } finally {
      await p.stop();
    }

    const plain = freePort();
    p = spawn(["reverse-proxy", "--from", `http://localhost:${plain}`, "--to", to], data);
    try {
      await until(async () => (await curl(`http://localhost:${plain}/`)).status === 200);
      assert.equal((await curl(`http://localhost:${plain}/`)).body, "upstream");
    } finally {
      await p.stop();
    }

    // A public name gets its certificate from the ACME issuer (Let's Encrypt by default; not
    // reachable here, so it is retried): the port speaks TLS only, never plain HTTP.
    const pub = freePort();
    p = spawn(
      ["reverse-proxy", "--from", `example.com:${pub}`, "--to", to, "--disable-redirects"],
      data,
    );
    await until(async () => (await curl(`http://127.0.0.1:${pub}/`)).code !== 7);
    const plainTry = await curl(`http://127.0.0.1:${pub}/`);
    assert.notEqual(plainTry.body, "upstream");
    const acme = await p.stop();
    assert.match(acme.stderr, /"obtaining certificate".*"example\.com"/);
    p = spawn([
      "reverse-proxy",
      "--from",
      `example.com:${pub}`,
      "--to",
      to,
      "--internal-certs",
      "--disable-redirects",
    ], data);
    try {
      const resolve = `example.com:${pub}:127.0.0.1`;
      await until(async () =>
        (await curl(`https://example.com:${pub}/`, { ca, resolve })).code === 0
      );
      assert.equal((await curl(`https://example.com:${pub}/`, { ca, resolve })).body, "upstream");
    } finally {
      await p.stop();
    }
  } finally {
    await up.shutdown();
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("file-server --domain with a public name never serves plain HTTP", async () => {
  const data = await Deno.makeTempDir({ prefix: "gatehouse-cli-tls-" });
  try {
    const port = freePort();
    await Deno.writeTextFile(`${data}/index.html`, "secret");
    const p = spawn([
      "file-server",
      "--domain",
      "example.com",
      "--listen",
      `127.0.0.1:${port}`,
      "--root",
      data,
    ], data);
    // It either runs HTTPS with an ACME certificate on the way, or (when :80 for its redirects
    // is taken on this machine) fails at load; either way no plain HTTP.
    let plain = "";
    for (let i = 0; i < 100; i++) {
      const r = await curl(`http://127.0.0.1:${port}/`);
      if (r.code !== 7) {
        plain = r.body;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.notEqual(plain, "secret");
    const r = await p.stop();
    assert.match(r.stderr, /"obtaining certificate".*"example\.com"|address already in use/i);
  } finally {
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("reverse-proxy config: Caddy's --from rules", () => {
  const base = {
    to: ["127.0.0.1:9000"],
    headerUp: {},
    headerDown: {},
    changeHostHeader: false,
    insecure: false,
    accessLog: false,
    debug: false,
    disableRedirects: false,
  };
  const server = (from: string, extra = {}) => {
    const c = reverseProxyConfig({ ...base, from, ...extra }) as {
      apps: { http: { servers: { proxy: Record<string, unknown> } }; tls?: unknown };
    };
    return { srv: c.apps.http.servers.proxy, tls: c.apps.tls };
  };
  assert.deepEqual(server("localhost:8443").srv.listen, [":8443"]);
  assert.equal(server("localhost:8443").srv.automatic_https, undefined, "HTTPS");
  assert.deepEqual(server("localhost").srv.listen, [":443"]);
  assert.deepEqual(server("localhost:80").srv.automatic_https, { disable: true });
  assert.deepEqual(server(":8080").srv.automatic_https, { disable: true });
  assert.deepEqual(server("http://localhost:8443").srv.automatic_https, { disable: true });
  assert.deepEqual(server("a.example", { disableRedirects: true }).srv.automatic_https, {
    disable_redirects: true,
  });
  assert.deepEqual(server("a.example", { internalCerts: true }).tls, {
    automation: { policies: [{ subjects: ["a.example"], issuers: [{ module: "internal" }] }] },
  });
});
