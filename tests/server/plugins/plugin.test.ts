/**
 * The plugin contract: what loading a package registers (all or none), the sample plugin
 * serving through an embedded server, a program's own entry with plugins (list-modules,
 * build-info, an adapter plugin), package requests and the generated launcher.
 */
import assert from "node:assert/strict";
import { getModule, moduleOrigin } from "../../../lib/server/module/mod.ts";
import { getAdapter } from "../../../lib/server/adapter.ts";
import { adapterOrigin, loadPlugin, PluginError } from "../../../lib/server/plugin.ts";
import { startServer } from "../../../lib/server/embed.ts";
import { packageId, parsePackageRequest } from "../../../lib/cli/package_spec.ts";
import { packageArguments } from "../../../lib/cli/add_package.ts";
import {
  entrySource,
  generationConfig,
  launcherSource,
  serverPackages,
} from "../../../lib/cli/installation.ts";
import { UsageError } from "../../../lib/cli/usage_error.ts";
import { DENO_JSON, freePort, ROOT } from "../fixtures/helpers.ts";
import { runIn } from "./_registry_world.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url);
const fixture = (name: string): Promise<Record<string, unknown>> =>
  import(new URL(`${name}/mod.js`, FIXTURES).href);

Deno.test("the sample plugin registers its modules with their package and serves requests", async () => {
  const ids = loadPlugin({
    package: "npm:gatehouse-plugin-greet",
    version: "1.0.0",
    exports: await fixture("greet"),
  });
  assert.deepEqual(ids, ["http.handlers.greet", "http.matchers.accept_language"]);
  assert.deepEqual(moduleOrigin("http.handlers.greet"), {
    package: "npm:gatehouse-plugin-greet",
    version: "1.0.0",
  });
  assert.equal(moduleOrigin("http.handlers.static_response"), undefined);

  const port = freePort();
  const config = (greeting: Record<string, unknown>) => ({
    apps: {
      http: {
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            routes: [
              { match: [{ accept_language: ["fr", "de"] }], handle: [greeting] },
              { handle: [{ handler: "greet", default_name: "stranger" }] },
            ],
          },
        },
      },
    },
  });
  const server = await startServer({
    adminAddress: `127.0.0.1:${freePort()}`,
    config: config({ handler: "greet", greeting: "Salut" }),
  });
  try {
    const get = async (query: string, lang?: string) => {
      const r = await fetch(`http://127.0.0.1:${port}/${query}`, {
        headers: lang ? { "accept-language": lang } : {},
      });
      return `${r.status} ${r.headers.get("content-type")} ${await r.text()}`;
    };
    assert.equal(await get("?name=Ada"), "200 text/plain; charset=utf-8 Hello, Ada!\n");
    assert.equal(await get(""), "200 text/plain; charset=utf-8 Hello, stranger!\n");
    assert.equal(await get("?name=Ada", "de-AT"), "200 text/plain; charset=utf-8 Salut, Ada!\n");
    // the most preferred language decides, whatever the order
    assert.equal(
      await get("?name=Ada", "fr;q=0.4, en"),
      "200 text/plain; charset=utf-8 Hello, Ada!\n",
    );
    assert.equal(
      await get("?name=Ada", "en;q=0.2, fr;q=0.9"),
      "200 text/plain; charset=utf-8 Salut, Ada!\n",
    );
    // a field the handler does not know is refused and the running config stays
    await assert.rejects(
      server.load(config({ handler: "greet", greating: "typo" })),
      /http\.handlers\.greet: unknown field "greating"/,
    );
    await assert.rejects(
      server.load(config({ handler: "greet", greeting: 42 })),
      /greeting must be a non-empty string/,
    );
    assert.equal(await get("?name=Ada", "fr"), "200 text/plain; charset=utf-8 Salut, Ada!\n");
  } finally {
    await server.stop();
  }
});

Deno.test("a package that breaks the contract registers nothing and says why", () => {
  const refused = (exports: Record<string, unknown>, code: string, message: RegExp) => {
    assert.throws(
      () => loadPlugin({ package: "npm:gatehouse-plugin-x", version: "1.0.0", exports }),
      (e) => e instanceof PluginError && e.code === code && message.test(e.message),
    );
  };
  const handler = (id: string) => ({ id, create: () => ({ serveHTTP: () => new Response() }) });
  refused({}, "not_a_plugin", /^plugin npm:gatehouse-plugin-x: it exports no `gatehouse` object/);
  refused({ gatehouse: {} }, "empty", /it provides no modules/);
  refused({ gatehouse: { modules: [] } }, "empty", /it provides no modules/);
  refused({ gatehouse: { modules: "x" } }, "invalid", /must be arrays/);
  refused(
    { gatehouse: { modules: [handler("http.handlers.fresh_one"), handler("http.handlers.vars")] } },
    "conflict",
    /module already registered: http\.handlers\.vars \(by gatehouse\)/,
  );
  refused(
    {
      gatehouse: {
        modules: [handler("http.handlers.fresh_two"), handler("http.handlers.fresh_two")],
      },
    },
    "conflict",
    /module already registered: http\.handlers\.fresh_two/,
  );
  refused(
    { gatehouse: { modules: [handler("http.handlers.fresh_three"), handler("Bad-Id")] } },
    "conflict",
    /invalid module id: "Bad-Id"/,
  );
  refused(
    { gatehouse: { modules: [{ id: "http.handlers.fresh_four" }] } },
    "conflict",
    /create must be a function/,
  );
  refused(
    {
      gatehouse: {
        modules: [handler("http.handlers.fresh_five")],
        adapters: [{ name: "json5", adapt: () => ({ result: {}, warnings: [] }) }],
      },
    },
    "conflict",
    /config adapter already registered: json5/,
  );
  refused(
    { gatehouse: { adapters: [{ name: "Upper Case", adapt: () => ({}) }] } },
    "invalid",
    /needs a lower-case name/,
  );
  // all or none: the good ids of refused packages were not registered
  for (const id of ["fresh_one", "fresh_two", "fresh_three", "fresh_four", "fresh_five"]) {
    assert.equal(getModule(`http.handlers.${id}`), undefined, id);
  }
});

Deno.test("an adapter plugin registers its adapter with its package", async () => {
  const ids = loadPlugin({
    package: "npm:gatehouse-plugin-jsonc",
    version: "0.3.0",
    exports: await fixture("jsonc"),
  });
  assert.deepEqual(ids, ["caddy.adapters.jsonc"]);
  assert.deepEqual(adapterOrigin("jsonc"), {
    package: "npm:gatehouse-plugin-jsonc",
    version: "0.3.0",
  });
  const out = await getAdapter("jsonc")!.adapt('// admin off\n{"admin": {"disabled": true}}');
  assert.deepEqual(out.result, { admin: { disabled: true } });
  assert.equal(adapterOrigin("json5"), undefined);
});

Deno.test("a program's own entry with plugins: list-modules, build-info, adapt, upgrade", async () => {
  const entry = new URL("custom_entry.ts", FIXTURES).pathname;
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-plugins-" });
  const run = (args: string[]) =>
    runIn(Deno.execPath(), ["run", "-A", "--config", DENO_JSON, entry, ...args], {
      NO_COLOR: "1",
      HOME: dir,
    }, dir);
  try {
    const skip = await run(["list-modules", "--packages", "--versions", "-s"]);
    assert.equal(skip.code, 0, skip.stderr);
    assert.equal(
      skip.stdout,
      [
        "caddy.adapters.jsonc v0.3.0 npm:gatehouse-plugin-jsonc",
        "http.handlers.greet v1.0.0 npm:gatehouse-plugin-greet",
        "http.matchers.accept_language v1.0.0 npm:gatehouse-plugin-greet",
        "",
        "  Non-standard modules: 3",
        "",
      ].join("\n"),
    );
    const all = (await run(["list-modules", "--packages"])).stdout.split("\n");
    assert.ok(all.includes("http.handlers.static_response jsr:@gatehouse/gatehouse"));
    assert.ok(all.includes("caddy.adapters.json5 jsr:@gatehouse/gatehouse"));
    assert.ok(all.includes("http.handlers.greet npm:gatehouse-plugin-greet"));
    const standard = all.filter((l) => l.endsWith(" jsr:@gatehouse/gatehouse")).length;
    assert.ok(all.includes(`  Standard modules: ${standard}`));
    assert.ok(
      all.indexOf(`  Standard modules: ${standard}`) <
        all.indexOf("http.handlers.greet npm:gatehouse-plugin-greet"),
    );

    const info = await run(["build-info"]);
    assert.match(info.stdout, /^path\tfile:\/\/.*custom_entry\.ts$/m);
    assert.match(
      info.stdout,
      /^plugin\tnpm:gatehouse-plugin-jsonc\tv0\.3\.0\tcaddy\.adapters\.jsonc$/m,
    );
    assert.match(info.stdout, /^runtime\tdeno\t/m);

    await Deno.writeTextFile(`${dir}/site.jsonc`, '// nothing yet\n{"apps": {}}\n');
    const adapted = await run(["adapt", "-c", `${dir}/site.jsonc`, "-a", "jsonc"]);
    assert.equal(adapted.code, 0, adapted.stderr);
    assert.deepEqual(JSON.parse(adapted.stdout), { apps: {} });

    const upgrade = await run(["upgrade"]);
    assert.equal(upgrade.code, 1);
    assert.match(upgrade.stderr, /is not an installed one \(it runs file:\/\/.*custom_entry\.ts\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("package requests: npm and jsr names with ranges; bad ones are usage errors", () => {
  assert.deepEqual(parsePackageRequest("gatehouse-plugin-greet"), {
    registry: "npm",
    name: "gatehouse-plugin-greet",
    range: "",
  });
  assert.deepEqual(parsePackageRequest("npm:@acme/gh-auth@^1.2"), {
    registry: "npm",
    name: "@acme/gh-auth",
    range: "^1.2",
  });
  assert.deepEqual(parsePackageRequest("jsr:@acme/gh@1.0.0"), {
    registry: "jsr",
    name: "@acme/gh",
    range: "1.0.0",
  });
  assert.equal(packageId(parsePackageRequest("x@latest")), "npm:x");
  for (const bad of ["", "UPPER", "a b", "jsr:unscoped", "x@1;rm", 'x@"1"', "@scope", "../x"]) {
    assert.throws(() => parsePackageRequest(bad), UsageError, bad);
  }
  assert.throws(() => packageArguments("add-package", []), /name at least one package/);
  assert.throws(
    () => packageArguments("add-package", ["@gatehouse/gatehouse"]),
    /not a plugin package; use upgrade/,
  );
  assert.throws(() => packageArguments("add-package", ["x", "npm:x@2"]), /npm:x is named twice/);
});

Deno.test("generated files: the launcher quotes its paths, the entry imports every package", async () => {
  const launcher = launcherSource("/opt/it's here", "/usr/bin/deno", "http://127.0.0.1:4873/");
  assert.ok(launcher.includes(`root='/opt/it'\\''s here'`));
  assert.equal((await runIn("sh", ["-n", "-c", launcher], {})).code, 0);
  const entry = entrySource(
    { registry: "npm", name: "@gatehouse/gatehouse", range: "0.2.0" },
    [{ registry: "npm", name: "gatehouse-plugin-greet", range: "^1" }],
  );
  assert.ok(entry.includes('import { main } from "npm:@gatehouse/gatehouse@0.2.0/cli";'));
  assert.ok(entry.includes('load: () => import("npm:gatehouse-plugin-greet@^1")'));
  // the npm package's optional peers the server loads are named, so that Deno locks them
  assert.deepEqual(
    serverPackages().filter((p) => !entry.includes(`import(${JSON.stringify(p)})`)),
    [],
  );
  assert.ok(
    serverPackages().includes(
      `npm:@peculiar/x509@${
        JSON.parse(await Deno.readTextFile(DENO_JSON)).imports["@peculiar/x509"].split("@").pop()
      }`,
    ),
  );
  assert.ok(!serverPackages().some((p) => /preact|react/.test(p)));
  const fromJsr = entrySource(
    { registry: "jsr", name: "@gatehouse/gatehouse", range: "0.2.0" },
    [],
  );
  assert.ok(!fromJsr.includes("serverPackages"), "JSR's package imports its npm packages itself");
  assert.deepEqual(JSON.parse(generationConfig()), {
    nodeModulesDir: "none",
    lock: { path: "./deno.lock", frozen: true },
  });
  // the entry is valid TypeScript, formatted as deno fmt would
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    for (const plugins of [[], [{ registry: "npm" as const, name: "p", range: "" }]]) {
      await Deno.writeTextFile(
        file,
        entrySource({ registry: "npm", name: "@gatehouse/gatehouse", range: "" }, plugins),
      );
      const fmt = await runIn(Deno.execPath(), ["fmt", "--check", "--line-width", "100", file], {
        NO_COLOR: "1",
      }, ROOT);
      assert.equal(fmt.code, 0, fmt.stdout + fmt.stderr);
    }
  } finally {
    await Deno.remove(file);
  }
});
