/**
 * The Gatehousefile end to end, with real processes: `gatehouse run` in a folder holding a
 * Gatehousefile serves the site; `reload` after an edit; a bad file keeps the old config and
 * the error names file:line; `POST /load` and `POST /adapt` with `text/caddyfile` and
 * `text/gatehousefile`; `--watch`; `validate` on a module that is not available.
 */
import assert from "node:assert/strict";
import { call, freePort, runCli, spawnCli, tempEnv, until } from "../fixtures/helpers.ts";
import { up } from "../fixtures/process.ts";

function gatehousefile(admin: number, site: number, body: string, quiet = true): string {
  return [
    "{",
    `\tadmin 127.0.0.1:${admin}`,
    ...(quiet ? ["\tlog {", "\t\toutput discard", "\t}"] : []),
    "}",
    "",
    `http://127.0.0.1:${site} {`,
    `\trespond "${body}"`,
    "}",
    "",
  ].join("\n");
}

async function get(port: number): Promise<string> {
  const r = await fetch(`http://127.0.0.1:${port}/`);
  return await r.text();
}

Deno.test("run serves the Gatehousefile of the current directory; reload applies an edit; a bad file keeps the old config", async () => {
  const t = await tempEnv();
  const admin = freePort(), site = freePort();
  const file = `${t.dir}/Gatehousefile`;
  await Deno.writeTextFile(file, gatehousefile(admin, site, "one"));
  const p = spawnCli(["run"], t.env, t.dir);
  try {
    await up(`http://127.0.0.1:${admin}`);
    await until(async () => (await get(site)) === "one", 15000, "site one");

    await Deno.writeTextFile(file, gatehousefile(admin, site, "two"));
    const r = await runCli(["reload"], t.env, t.dir);
    assert.equal(r.code, 0, r.out);
    assert.equal(await get(site), "two");

    // an unknown directive: the error names the file and line, the old config keeps running
    await Deno.writeTextFile(
      file,
      gatehousefile(admin, site, "three").replace('\trespond "three"', "\trever_proxy localhost:9"),
    );
    const bad = await runCli(["reload"], t.env, t.dir);
    assert.equal(bad.code, 1);
    assert.match(
      bad.out,
      /Gatehousefile:9: unrecognized directive: rever_proxy \(did you mean 'reverse_proxy'\?\)/,
    );
    assert.equal(await get(site), "two");

    // errors found after parsing name their line as well, and change nothing either
    const cases: [string, RegExp][] = [
      [
        "\tinvoke nowhere",
        /Gatehousefile:9: cannot invoke named route 'nowhere', which was not defined/,
      ],
      [
        "\troute {\n\t\ttls internal\n\t}",
        /tls directive returned something other than an HTTP route or subroute \(only handler directives can be used in routes\), at Gatehousefile:10/,
      ],
    ];
    for (const [edit, re] of cases) {
      await Deno.writeTextFile(
        file,
        gatehousefile(admin, site, "four").replace('\trespond "four"', edit),
      );
      const r = await runCli(["reload"], t.env, t.dir);
      assert.equal(r.code, 1, r.out);
      assert.match(r.out, re);
      assert.equal(await get(site), "two");
    }
  } finally {
    await call(`http://127.0.0.1:${admin}`, "POST", "/stop").catch(() => {});
    await p.status;
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("POST /load and /adapt take text/caddyfile and text/gatehousefile; a failed load keeps the old config", async () => {
  const t = await tempEnv();
  const admin = freePort(), site = freePort();
  await Deno.writeTextFile(`${t.dir}/Gatehousefile`, gatehousefile(admin, site, "first"));
  const p = spawnCli(["run"], t.env, t.dir);
  const base = `http://127.0.0.1:${admin}`;
  try {
    await up(base);
    await until(async () => (await get(site)) === "first", 15000, "site");
    const loaded = await call(base, "POST", "/load", gatehousefile(admin, site, "loaded"), {
      "content-type": "text/caddyfile",
    });
    assert.equal(loaded.status, 200, loaded.body);
    assert.equal(await get(site), "loaded");

    const adapted = await call(base, "POST", "/adapt", gatehousefile(admin, site, "x"), {
      "content-type": "text/gatehousefile",
    });
    assert.equal(adapted.status, 200, adapted.body);
    const json = JSON.parse(adapted.body);
    const cfg = json.result ?? json;
    assert.deepEqual(cfg.apps.http.servers.srv0.listen, [`:${site}`]);

    const bad = await call(base, "POST", "/load", ":80 {\n\trespond\n}\n", {
      "content-type": "text/caddyfile",
    });
    assert.equal(bad.status, 400);
    // named as Caddy names a text/caddyfile body
    assert.match(bad.body, /Caddyfile:2/);
    assert.equal(await get(site), "loaded");
  } finally {
    await call(base, "POST", "/stop").catch(() => {});
    await p.status;
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("run --watch reloads the Gatehousefile when it changes, warnings go to the log", async () => {
  const t = await tempEnv();
  const admin = freePort(), site = freePort();
  const file = `${t.dir}/site.caddyfile`;
  await Deno.writeTextFile(file, gatehousefile(admin, site, "before", false));
  const p = spawnCli(["run", "--config", file, "--watch"], t.env, t.dir);
  try {
    await up(`http://127.0.0.1:${admin}`);
    await until(async () => (await get(site)) === "before", 15000, "site");
    // unformatted on purpose: the adapter warns, the config still applies
    await Deno.writeTextFile(
      file,
      gatehousefile(admin, site, "after", false).replace('\trespond "after"', 'respond    "after"'),
    );
    await until(async () => (await get(site)) === "after", 15000, "watched reload")
      .catch((e) => {
        throw new Error(`${e.message}; server output:\n${p.output()}`);
      });
    // an editor that writes a new file and renames it over the old one is seen too
    await Deno.writeTextFile(`${file}.swp`, gatehousefile(admin, site, "renamed", false));
    await Deno.rename(`${file}.swp`, file);
    await until(async () => (await get(site)) === "renamed", 15000, "reload after a rename")
      .catch((e) => {
        throw new Error(`${e.message}; server output:\n${p.output()}`);
      });
  } finally {
    await call(`http://127.0.0.1:${admin}`, "POST", "/stop").catch(() => {});
    await p.status;
    await Deno.remove(t.dir, { recursive: true });
  }
  assert.match(p.output(), /input is not formatted/);
});

Deno.test("adapt: default file, -p, warnings on stderr; validate names a module that is not available", async () => {
  const t = await tempEnv();
  try {
    await Deno.writeTextFile(`${t.dir}/Caddyfile`, ":8080 {\n\ttemplates\n}\n");
    const r = await runCli(["adapt", "--pretty"], t.env, t.dir);
    assert.equal(r.code, 0, r.out);
    assert.match(r.stdout, /\n\t+"handler": "templates"/);
    const v = await runCli(["adapt", "--validate"], t.env, t.dir);
    assert.equal(v.code, 1);
    assert.match(v.out, /module http\.handlers\.templates is not available/);
    await Deno.writeTextFile(`${t.dir}/Caddyfile`, ":8080 {\nrespond hi\n}\n");
    const w = await runCli(["adapt"], t.env, t.dir);
    assert.equal(w.code, 0);
    assert.match(w.out, /\[WARNING\] Caddyfile:2: input is not formatted/);
    assert.doesNotMatch(w.stdout, /WARNING/);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});
