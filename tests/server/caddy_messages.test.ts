/**
 * Messages a Caddy user's tooling matches, on a server process: a Caddyfile POSTed as
 * `text/caddyfile` is named `Caddyfile:N` in errors (Caddy 2.6.2 as the oracle, its answers
 * compared byte for byte), a file keeps its own name (`adapt --config`); a duplicate `@id` is
 * `indexing config: duplicate ID ...` (current Caddy: `caddy.go` `indexConfigObjects` and
 * `caddytest/caddytest_test.go`, v2.11.2; Caddy 2.6.2 does not check); the ACME server's
 * directory is current Caddy's document (`caddytest/integration/acmeserver_test.go`,
 * `TestACMEServerDirectory`; Caddy 2.6.2 added `"meta":{}`).
 */
import assert from "node:assert/strict";
import { call, CLI, DENO_JSON, freePort, until } from "./fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "./fixtures/process.ts";

const caddyfiles = [
  ":8080 {\n\tbogusdirective\n}\n",
  "{\n\tbogusopt\n}\n",
  "localhost {\n\trespond {\n\t\tbogus\n\t}\n}\n",
];

/** Caddy 2.6.2 with its admin API on a free port. */
async function caddy(): Promise<{ base: string; stop: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-caddy-" });
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/caddy.json`,
    JSON.stringify({ admin: { listen: `127.0.0.1:${port}` } }),
  );
  const child = new Deno.Command("caddy", {
    args: ["run", "--config", `${dir}/caddy.json`],
    stdout: "null",
    stderr: "null",
    env: { HOME: dir, XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` },
  }).spawn();
  const base = `http://127.0.0.1:${port}`;
  await until(async () => (await call(base, "GET", "/config/")).status === 200, 10_000, "caddy");
  return {
    base,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("messages: a text/caddyfile body is named Caddyfile:N in errors, as Caddy 2.6.2 names it; a file keeps its name", async () => {
  const s = await serve({ logging: QUIET }, ["--workers", "1"]);
  const oracle = await caddy();
  try {
    await up(s.base);
    for (const text of caddyfiles) {
      const post = (base: string) =>
        call(base, "POST", "/load", text, { "content-type": "text/caddyfile" });
      const [ours, theirs] = [await post(s.base), await post(oracle.base)];
      assert.equal(ours.status, 400);
      assert.equal(theirs.status, 400);
      const message = (body: string) => JSON.parse(body).error as string;
      assert.match(message(ours.body), /Caddyfile:\d/);
      // a subdirective's error has current Caddy's form (`..., at Caddyfile:3`, dispenser.go's
      // WrapErr), where 2.6.2 wrote `Caddyfile:3 - Error during parsing: ...`
      if (!text.includes("respond")) assert.equal(message(ours.body), message(theirs.body));
      const adapt = await call(s.base, "POST", "/adapt", text, {
        "content-type": "text/caddyfile",
      });
      assert.match(message(adapt.body), /Caddyfile:\d/);
    }
    // text/gatehousefile keeps the project's name
    const own = await call(s.base, "POST", "/load", caddyfiles[0], {
      "content-type": "text/gatehousefile",
    });
    assert.match(JSON.parse(own.body).error, /Gatehousefile:2: unrecognized directive/);
    // a file is named by its path
    const file = `${s.dir}/site.caddyfile`;
    await Deno.writeTextFile(file, caddyfiles[0]);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", DENO_JSON, CLI, "adapt", "--config", file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.notEqual(out.code, 0);
    assert.match(
      new TextDecoder().decode(out.stderr),
      new RegExp(`${file}:2: unrecognized directive: bogusdirective`),
    );
  } finally {
    await oracle.stop();
    s.p.child.kill("SIGTERM");
    await finish(s.p, s.dir);
  }
});

Deno.test("messages: a duplicate @id is Caddy's 'indexing config: duplicate ID' with both paths", async () => {
  const s = await serve({ logging: QUIET }, ["--workers", "1"]);
  try {
    await up(s.base);
    const route = (id: string) => ({
      "@id": id,
      handle: [{ handler: "static_response", body: id }],
    });
    const config = (routes: unknown[]) => ({
      logging: QUIET,
      apps: { http: { servers: { s_server: { listen: ["127.0.0.1:0"], routes } } } },
    });
    const r = await call(
      s.base,
      "POST",
      "/load",
      config([route("route2"), route("route1"), route("route2")]),
    );
    assert.equal(r.status, 400);
    assert.equal(
      r.body,
      `{"error":"indexing config: duplicate ID 'route2' found at ` +
        `/config/apps/http/servers/s_server/routes/0 and /config/apps/http/servers/s_server/routes/2"}\n`,
    );
    // the same through POST of a copy into the running config (Caddy's own scenario)
    assert.equal(
      (await call(s.base, "POST", "/load", config([route("route1"), route("route2")]))).status,
      200,
    );
    const copy = await call(
      s.base,
      "POST",
      "/config/apps/http/servers/s_server/routes",
      route("route2"),
    );
    assert.equal(copy.status, 400);
    assert.equal(
      JSON.parse(copy.body).error,
      "indexing config: duplicate ID 'route2' found at " +
        "/config/apps/http/servers/s_server/routes/1 and /config/apps/http/servers/s_server/routes/2",
    );
  } finally {
    s.p.child.kill("SIGTERM");
    await finish(s.p, s.dir);
  }
});

Deno.test("messages: the ACME server's directory is Caddy's document byte for byte", async () => {
  const [http, https] = [freePort(), freePort()];
  const s = await serve({ logging: QUIET }, ["--workers", "1"]);
  try {
    await up(s.base);
    const caddyfile =
      `{\n\tlocal_certs\n\thttp_port ${http}\n\thttps_port ${https}\n\tstorage file_system ${s.dir}/storage\n}\n\nacme.localhost:${https} {\n\tacme_server\n}\n`;
    const load = await call(s.base, "POST", "/load", caddyfile, {
      "content-type": "text/caddyfile",
    });
    assert.equal(load.status, 200, load.body);
    const url = `https://acme.localhost:${https}/acme/local/directory`;
    let body = "";
    await until(
      async () => {
        const out = await new Deno.Command("curl", {
          args: ["-sk", "--resolve", `acme.localhost:${https}:127.0.0.1`, url],
          stdout: "piped",
        }).output();
        body = new TextDecoder().decode(out.stdout);
        return out.success && body !== "";
      },
      15_000,
      "the directory",
    );
    const base = `https://acme.localhost:${https}/acme/local`;
    assert.equal(
      body,
      `{"newNonce":"${base}/new-nonce","newAccount":"${base}/new-account","newOrder":"${base}/new-order",` +
        `"revokeCert":"${base}/revoke-cert","keyChange":"${base}/key-change"}\n`,
    );
  } finally {
    s.p.child.kill("SIGTERM");
    await finish(s.p, s.dir);
  }
});
