/**
 * `gatehouse adapt --reverse` through the command line: a JSON file, stdin, and the live
 * config of a running server (`--address`); parts with no Gatehousefile form fail with their
 * JSON path.
 */
import assert from "node:assert/strict";
import { freePort, runCli, spawnCli, tempEnv } from "../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../fixtures/process.ts";
import { caddyAdapt, hasCaddy, ourAdapt } from "./_adapters.ts";
import { formatGatehousefile } from "../../../lib/server/caddyfile/formatter.ts";

function siteConfig(port: number): Record<string, unknown> {
  return {
    logging: QUIET,
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`:${port}`],
            routes: [{
              match: [{ host: ["localhost"] }],
              handle: [{
                handler: "subroute",
                routes: [
                  {
                    handle: [{
                      handler: "headers",
                      response: { set: { "X-Served-By": ["gatehouse"] } },
                    }],
                  },
                  {
                    match: [{ path: ["/api/*"] }],
                    handle: [{ handler: "static_response", body: "api", status_code: 201 }],
                  },
                  { handle: [{ handler: "static_response", body: "hello {http.request.host}" }] },
                ],
              }],
              terminal: true,
            }],
          },
        },
      },
    },
  };
}

const EXPECTED = (port: number) =>
  `{
	log {
		output discard
	}
}

localhost:${port} {
	header X-Served-By gatehouse
	respond /api/* api 201
	respond "hello {host}"
}
`;

/**
 * A site served over automatic HTTPS from the local CA, as a server runs it: storage, the tls
 * app's internal issuer (`local_certs`) and the pki app (CA name, no trust install).
 */
function httpsConfig(port: number, storage: string): Record<string, unknown> {
  const config = siteConfig(port);
  return {
    ...config,
    storage: { module: "file_system", root: storage },
    apps: {
      ...config.apps as Record<string, unknown>,
      tls: { automation: { policies: [{ issuers: [{ module: "internal" }] }] } },
      pki: {
        certificate_authorities: { local: { name: "Gatehouse Test CA", install_trust: false } },
      },
    },
  };
}

const EXPECTED_HTTPS = (port: number, storage: string) =>
  `{
	storage file_system ${storage}
	local_certs
	skip_install_trust
	pki {
		ca {
			name "Gatehouse Test CA"
		}
	}
	log {
		output discard
	}
}

localhost:${port} {
	header X-Served-By gatehouse
	respond /api/* api 201
	respond "hello {host}"
}
`;

Deno.test("adapt --reverse reads the live config of a running HTTPS server (--address), which adapts back", async () => {
  const port = freePort();
  const storage = await Deno.makeTempDir({ prefix: "gf-reverse-storage-" });
  const config = httpsConfig(port, storage);
  const s = await serve(config);
  let client: Deno.HttpClient | undefined;
  try {
    await up(s.base);
    // the server really serves the site the text describes, over HTTPS from its local CA
    const chain = await (await fetch(`${s.base}/pki/ca/local/certificates`, {
      headers: { origin: s.base },
    })).text();
    client = Deno.createHttpClient({
      caCerts: [chain.slice(chain.lastIndexOf("-----BEGIN CERTIFICATE-----"))],
    });
    const res = await fetch(`https://localhost:${port}/api/x`, { client });
    assert.equal(res.status, 201);
    assert.equal(await res.text(), "api");
    assert.equal(res.headers.get("x-served-by"), "gatehouse");

    const live = await (await fetch(`${s.base}/config/`)).json();
    const r = await runCli(["adapt", "--reverse", "--address", `127.0.0.1:${s.port}`], s.env);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.stdout, EXPECTED_HTTPS(port, storage));
    assert.equal(formatGatehousefile(r.stdout), r.stdout);
    // adapting the text gives back the live config exactly (ours, and Caddy 2.6.2's)
    const ours = ourAdapt();
    assert.ok(ours, "the gatehousefile adapter is registered");
    assert.deepEqual(await ours(r.stdout), live);
    assert.deepEqual(live, config);
    if (hasCaddy()) assert.deepEqual(await caddyAdapt(r.stdout), live);
  } finally {
    client?.close();
    await fetch(`${s.base}/stop`, { method: "POST", headers: { origin: s.base } }).then((r) =>
      r.body?.cancel()
    ).catch(() => {});
    await finish(s.p, s.dir);
    await Deno.remove(storage, { recursive: true }).catch(() => {});
  }
});

Deno.test("adapt --reverse reads a JSON file and stdin", async () => {
  const t = await tempEnv();
  try {
    const port = 8080;
    const file = `${t.dir}/config.json`;
    await Deno.writeTextFile(file, JSON.stringify(siteConfig(port)));
    const fromFile = await runCli(["adapt", "--reverse", "--config", file], t.env);
    assert.equal(fromFile.code, 0, fromFile.out);
    assert.equal(fromFile.stdout, EXPECTED(port));

    const p = spawnCli(["adapt", "--reverse", "--config", "-"], t.env, t.dir, true);
    const w = p.child.stdin.getWriter();
    await w.write(new TextEncoder().encode(JSON.stringify(siteConfig(port))));
    await w.close();
    const s = await p.status;
    assert.equal(s.code, 0, p.output());
    assert.equal(p.stdout(), EXPECTED(port));
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("adapt --reverse names the JSON path of each part with no form and exits 1", async () => {
  const t = await tempEnv();
  try {
    const config = siteConfig(8080);
    // deno-lint-ignore no-explicit-any
    const sub = (config.apps as any).http.servers.srv0.routes[0].handle[0] as {
      routes: unknown[];
    };
    sub.routes.push({ handle: [{ handler: "no_such_module", x: 1 }] });
    sub.routes.push({
      match: [{ method: ["GET"] }, { method: ["HEAD"] }],
      handle: [{ handler: "static_response" }],
    });
    const file = `${t.dir}/config.json`;
    await Deno.writeTextFile(file, JSON.stringify(config));
    const r = await runCli(["adapt", "--reverse", "--config", file], t.env);
    assert.equal(r.code, 1);
    assert.match(
      r.out,
      /\/apps\/http\/servers\/srv0\/routes\/0\/handle\/0\/routes\/3\/handle\/0: handler module no_such_module has no Gatehousefile directive/,
    );
    assert.match(
      r.out,
      /\/apps\/http\/servers\/srv0\/routes\/0\/handle\/0\/routes\/4\/match: a route with more than one matcher set/,
    );
    assert.match(r.out, /2 part\(s\) of the JSON config have no Gatehousefile form/);
    // the rest is still written, and the parts with no form are not
    assert.match(r.stdout, /respond \/api\/\* api 201/);
    assert.doesNotMatch(r.stdout, /no_such_module|method GET/);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("adapt --reverse without a JSON source is a usage error", async () => {
  const t = await tempEnv();
  try {
    const r = await runCli(["adapt", "--reverse"], t.env, t.dir);
    assert.notEqual(r.code, 0);
    assert.match(r.out, /--reverse reads native JSON: give --config <file\.json>/);
    assert.equal(r.stdout, "");
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});
