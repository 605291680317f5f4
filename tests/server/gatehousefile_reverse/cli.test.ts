/**
 * `gatehouse adapt --reverse` through the command line: a JSON file, stdin, and the live
 * config of a running server (`--address`); parts with no Gatehousefile form fail with their
 * JSON path.
 */
import assert from "node:assert/strict";
import { freePort, runCli, spawnCli, tempEnv } from "../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../fixtures/process.ts";
import { caddyAdapt, hasCaddy } from "./_adapters.ts";
import { formatGatehousefile } from "../../../lib/server/adapters/gatehousefile/formatter.ts";

function siteConfig(port: number): Record<string, unknown> {
  return {
    logging: QUIET,
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`:${port}`],
            // a plain-HTTP site (`http://localhost:PORT`), as Caddy writes it
            automatic_https: { skip: ["localhost"] },
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

http://localhost:${port} {
	header X-Served-By gatehouse
	respond /api/* api 201
	respond "hello {host}"
}
`;

Deno.test("adapt --reverse reads the live config of a running server (--address)", async () => {
  const port = freePort();
  const config = siteConfig(port);
  const s = await serve(config);
  try {
    await up(s.base);
    // the server really serves the site the text describes
    const res = await fetch(`http://localhost:${port}/api/x`);
    assert.equal(res.status, 201);
    assert.equal(await res.text(), "api");
    const r = await runCli(["adapt", "--reverse", "--address", `127.0.0.1:${s.port}`], s.env);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.stdout, EXPECTED(port));
    assert.equal(formatGatehousefile(r.stdout), r.stdout);
    if (hasCaddy()) assert.deepEqual(await caddyAdapt(r.stdout), config);
  } finally {
    await fetch(`${s.base}/stop`, { method: "POST", headers: { origin: s.base } }).then((r) =>
      r.body?.cancel()
    ).catch(() => {});
    await finish(s.p, s.dir);
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
