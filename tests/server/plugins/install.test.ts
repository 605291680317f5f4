/**
 * An installed gatehouse against a real npm registry (verdaccio on a loopback port, with this
 * checkout's npm mirror and the fixture plugins published to it): install, add-package of the
 * sample plugin whose handler then serves a loaded config, failing changes that leave the
 * installation byte for byte as it was, a reinstall from an empty cache that downloads exactly
 * the locked versions, upgrade N → N+1 while a server keeps answering (and a second upgrade at
 * the same time is refused), start, remove-package, list-modules and build-info, and a storage
 * plugin that a server's CA and certificates go through.
 */
import assert from "node:assert/strict";
import { CLI, DENO_JSON, freePort, until } from "../fixtures/helpers.ts";
import {
  fileIdentities,
  openWorld,
  runIn,
  snapshot,
  VERSION_N,
  VERSION_N1,
} from "./_registry_world.ts";

/** A config serving the sample plugin: French speakers get "Bonjour", everyone else "Hello". */
function greetConfig(admin: number, port: number): Record<string, unknown> {
  return {
    admin: { listen: `127.0.0.1:${admin}` },
    apps: {
      http: {
        servers: {
          greet: {
            listen: [`127.0.0.1:${port}`],
            routes: [
              {
                match: [{ accept_language: ["fr"] }],
                handle: [{ handler: "greet", greeting: "Bonjour" }],
              },
              { handle: [{ handler: "greet" }] },
            ],
          },
        },
      },
    },
  };
}

async function get(port: number, query: string, headers: Record<string, string> = {}) {
  const r = await fetch(`http://127.0.0.1:${port}/${query}`, { headers });
  return { status: r.status, body: await r.text() };
}

Deno.test({
  name: "plugins and upgrades of an installed gatehouse against a local npm registry",
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const world = await openWorld();
  const root = `${world.dir}/gatehouse`;
  const launcher = `${root}/bin/gatehouse`;
  const gh = (args: string[], env: Record<string, string> = {}) =>
    runIn(launcher, args, { ...world.env, ...env }, world.dir);
  const checkout = (args: string[]) =>
    runIn(
      Deno.execPath(),
      ["run", "-A", "--config", DENO_JSON, CLI, ...args],
      world.env,
      world.dir,
    );
  const servers: Deno.ChildProcess[] = [];
  const admin = freePort();
  const port = freePort();
  try {
    await world.publishMirror(VERSION_N);
    for (const name of ["greet", "empty", "clash", "throws", "fickle", "journal"]) {
      await world.publishFixture(name);
    }

    await t.step("install from a source checkout pins gatehouse N with a lock file", async () => {
      const failed = await checkout([
        "install",
        "--root",
        `${world.dir}/not-installed`,
        "--version",
        VERSION_N,
        "--registry",
        world.registry.url,
        "--minimum-dependency-age",
        "0",
        "gatehouse-plugin-nope",
      ]);
      assert.equal(failed.code, 1, failed.stdout + failed.stderr);
      assert.match(failed.stderr, /npm package 'gatehouse-plugin-nope' does not exist/);
      assert.match(failed.stderr, /Nothing was installed/);
      await assert.rejects(Deno.lstat(`${world.dir}/not-installed`), Deno.errors.NotFound);

      const r = await checkout([
        "install",
        "--root",
        root,
        "--version",
        VERSION_N,
        "--registry",
        world.registry.url,
        "--minimum-dependency-age",
        "0",
      ]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, new RegExp(`installed gatehouse v${VERSION_N}, no plugin packages`));
      assert.equal((await Deno.stat(launcher)).mode! & 0o111, 0o111);
      assert.equal((await gh(["version"])).stdout.trim(), `gatehouse v${VERSION_N}`);
      const lock = JSON.parse(await Deno.readTextFile(`${root}/generations/1/deno.lock`));
      const key = Object.keys(lock.npm).find((k) =>
        k.startsWith(`@gatehouse/gatehouse@${VERSION_N}`)
      );
      assert.match(lock.npm[key!].integrity, /^sha512-/);
      const mods = await gh(["list-modules", "--packages", "--versions", "-s"]);
      assert.equal(mods.code, 0, mods.stderr);
      assert.equal(mods.stdout, "\n  Non-standard modules: 0\n");

      const again = await checkout(["install", "--root", root, "--registry", world.registry.url]);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already holds an installation/);
    });

    await t.step(
      "add-package: the sample plugin's handler and matcher serve a loaded config",
      async () => {
        const r = await gh(["add-package", "gatehouse-plugin-greet"]);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        const mods = await gh(["list-modules", "--packages", "--versions", "-s"]);
        assert.equal(
          mods.stdout,
          [
            "http.handlers.greet v1.0.0 npm:gatehouse-plugin-greet",
            "http.matchers.accept_language v1.0.0 npm:gatehouse-plugin-greet",
            "",
            "  Non-standard modules: 2",
            "",
          ].join("\n"),
        );
        const all = (await gh(["list-modules", "--packages", "--versions"])).stdout.split("\n");
        assert.ok(
          all.includes(`http.handlers.static_response v${VERSION_N} npm:@gatehouse/gatehouse`),
        );
        assert.ok(all.includes("  Non-standard modules: 2"));
        const info = (await gh(["build-info"])).stdout;
        assert.match(info, new RegExp(`^mod\tnpm:@gatehouse/gatehouse\tv${VERSION_N}$`, "m"));
        assert.match(
          info,
          /^plugin\tnpm:gatehouse-plugin-greet\tv1\.0\.0\thttp\.handlers\.greet,/m,
        );
        assert.match(info, /^dep\tnpm:gatehouse-plugin-greet\tv1\.0\.0\tsha512-/m);
        assert.match(info, new RegExp(`^build\tinstall=${root}$`, "m"));

        // a field the handler does not know is refused, not ignored
        const bad = greetConfig(admin, port);
        // deno-lint-ignore no-explicit-any
        (bad as any).apps.http.servers.greet.routes[1].handle[0].colour = "blue";
        await Deno.writeTextFile(`${world.dir}/bad.json`, JSON.stringify(bad));
        const refused = await gh(["validate", "-c", `${world.dir}/bad.json`]);
        assert.equal(refused.code, 1);
        assert.match(
          refused.stdout + refused.stderr,
          /http\.handlers\.greet: unknown field "colour"/,
        );

        await Deno.writeTextFile(
          `${world.dir}/greet.json`,
          JSON.stringify(greetConfig(admin, port)),
        );
        servers.push(
          new Deno.Command(launcher, {
            args: ["run", "-c", `${world.dir}/greet.json`],
            env: world.env,
            cwd: world.dir,
            stdin: "null",
            stdout: "null",
            stderr: "null",
          }).spawn(),
        );
        await until(async () => (await get(port, "")).status === 200, 30_000, "the greet server");
        assert.deepEqual(await get(port, "?name=Ada"), { status: 200, body: "Hello, Ada!\n" });
        assert.deepEqual(
          await get(port, "?name=Ada", { "accept-language": "fr-CH, en;q=0.8" }),
          { status: 200, body: "Bonjour, Ada!\n" },
        );
        assert.deepEqual(await get(port, ""), { status: 200, body: "Hello, world!\n" });
      },
    );

    // the files of version N the server started above loads from: no later change rewrites them
    let versionN = "";
    let filesN: Record<string, string> = {};
    await t.step(
      "failing add-package and upgrade leave the installation byte for byte",
      async () => {
        const [npmCache] = [...Deno.readDirSync(`${root}/cache/npm`)].map((e) => e.name);
        versionN = `${root}/cache/npm/${npmCache}/@gatehouse/gatehouse/${VERSION_N}`;
        filesN = await fileIdentities(versionN);
        assert.ok(Object.keys(filesN).length > 100, versionN);
        const before = await snapshot(root);
        const cases: [string, RegExp][] = [
          ["gatehouse-plugin-nope", /npm package 'gatehouse-plugin-nope' does not exist/],
          [
            "gatehouse-plugin-empty",
            /plugin npm:gatehouse-plugin-empty: it exports no `gatehouse` object/,
          ],
          [
            "gatehouse-plugin-clash",
            /plugin npm:gatehouse-plugin-clash: module already registered: http\.handlers\.static_response/,
          ],
          [
            "gatehouse-plugin-throws",
            /plugin npm:gatehouse-plugin-throws: importing it failed: .*refuses to register/,
          ],
        ];
        for (const [pkg, reason] of cases) {
          const r = await gh(["add-package", pkg]);
          assert.equal(r.code, 1, `${pkg}: ${r.stdout}${r.stderr}`);
          assert.match(r.stderr, reason);
          assert.match(
            r.stderr,
            new RegExp(
              `The installation in ${root} is unchanged: gatehouse v${VERSION_N}, ` +
                "plugin packages: npm:gatehouse-plugin-greet 1\\.0\\.0",
            ),
          );
          assert.deepEqual(await snapshot(root), before, pkg);
        }
        const notThere = await gh(["remove-package", "gatehouse-plugin-empty"]);
        assert.equal(notThere.code, 1);
        assert.match(notThere.stderr, /npm:gatehouse-plugin-empty is not installed/);
        assert.deepEqual(await snapshot(root), before);

        // a broken release of the plugin: upgrade refuses it and keeps 1.0.0
        await world.publishFixture("greet", "1.1.0", async (dir) => {
          await Deno.writeTextFile(`${dir}/mod.js`, 'throw new Error("greet 1.1.0 is broken");\n');
        });
        const r = await gh(["upgrade"]);
        assert.equal(r.code, 1, r.stdout + r.stderr);
        assert.match(
          r.stderr,
          /plugin npm:gatehouse-plugin-greet: importing it failed: greet 1\.1\.0 is broken/,
        );
        assert.deepEqual(await snapshot(root), before);
        const unreachable = await gh(["upgrade"], {
          NPM_CONFIG_REGISTRY: `http://127.0.0.1:${freePort()}/`,
        });
        assert.equal(unreachable.code, 1);
        assert.match(unreachable.stderr, /resolving the packages failed/);
        assert.deepEqual(await snapshot(root), before);
        assert.deepEqual(await get(port, "?name=Ada"), { status: 200, body: "Hello, Ada!\n" });
      },
    );

    await t.step(
      "with an empty cache the launcher downloads the locked versions again, not newer ones",
      async () => {
        await world.publishMirror(VERSION_N1);
        await world.publishFixture("greet", "1.1.1");
        const before = await snapshot(root);
        const generation = (await Deno.readTextFile(`${root}/current`)).trim();
        const lock = await Deno.readTextFile(`${root}/generations/${generation}/deno.lock`);
        // The server started above runs from this cache (and loads from it lazily): the cache
        // leaves the install directory for the check and comes back afterwards, untouched.
        const away = `${world.dir}/cache-away`;
        await Deno.rename(`${root}/cache`, away);
        try {
          assert.equal((await gh(["version"])).stdout.trim(), `gatehouse v${VERSION_N}`);
          const mods = await gh(["list-modules", "--packages", "--versions", "-s"]);
          assert.equal(mods.code, 0, mods.stderr);
          assert.match(mods.stdout, /^http\.handlers\.greet v1\.0\.0 npm:gatehouse-plugin-greet$/m);
          // what was downloaded: the locked releases only, though newer ones are published
          const [registryDir] = [...Deno.readDirSync(`${root}/cache/npm`)].map((e) => e.name);
          const versions = (name: string) =>
            [...Deno.readDirSync(`${root}/cache/npm/${registryDir}/${name}`)]
              .filter((e) => e.isDirectory).map((e) => e.name);
          assert.deepEqual(versions("@gatehouse/gatehouse"), [VERSION_N]);
          assert.deepEqual(versions("gatehouse-plugin-greet"), ["1.0.0"]);
          assert.equal(
            await Deno.readTextFile(`${root}/generations/${generation}/deno.lock`),
            lock,
          );
          assert.deepEqual(await snapshot(root), before);
        } finally {
          await Deno.remove(`${root}/cache`, { recursive: true }).catch(() => {});
          await Deno.rename(away, `${root}/cache`);
        }
        assert.deepEqual(await fileIdentities(versionN), filesN);
        assert.deepEqual(await get(port, "?name=Ada"), { status: 200, body: "Hello, Ada!\n" });
      },
    );

    await t.step(
      "upgrade N → N+1 while a server started before keeps answering; a second upgrade is refused",
      async () => {
        let stop = false;
        let ok = 0;
        const failures: string[] = [];
        const load = (async () => {
          while (!stop) {
            try {
              const r = await get(port, "?name=Ada");
              if (r.status === 200 && r.body === "Hello, Ada!\n") ok++;
              else failures.push(`${r.status} ${r.body}`);
            } catch (e) {
              failures.push(String(e));
            }
          }
        })();
        const okBefore = ok;
        // Two upgrades at once: the first is paused (SIGSTOP) once it holds the change lock
        // (its new generation exists only then), so the two overlap however fast the machine.
        const first = new Deno.Command(launcher, {
          args: ["upgrade"],
          env: world.env,
          cwd: world.dir,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const building = async () =>
          (await Array.fromAsync(Deno.readDir(`${root}/generations`)))
            .some((e) => e.name.startsWith(".new-"));
        let second;
        try {
          await until(building, 60_000, "the first upgrade to take the lock");
          Deno.kill(first.pid, "SIGSTOP");
          second = await gh(["upgrade"]);
        } finally {
          Deno.kill(first.pid, "SIGCONT");
        }
        const out = await first.output();
        const r = {
          code: out.code,
          stdout: new TextDecoder().decode(out.stdout),
          stderr: new TextDecoder().decode(out.stderr),
        };
        const okDuring = ok - okBefore;
        stop = true;
        await load;
        assert.equal(second.code, 1, second.stdout + second.stderr);
        assert.match(
          second.stderr,
          new RegExp(
            "gatehouse upgrade: another install, upgrade, add-package or remove-package is " +
              `changing ${root}; try again when it is done`,
          ),
        );
        assert.match(
          second.stderr,
          new RegExp(`The installation in ${root} is unchanged: gatehouse v${VERSION_N},`),
        );
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.match(
          r.stdout,
          new RegExp(`upgrade: now gatehouse v${VERSION_N1}, plugin packages`),
        );
        assert.deepEqual(failures, []);
        assert.ok(okDuring > 0, "requests were answered while the upgrade ran");
        assert.equal((await gh(["version"])).stdout.trim(), `gatehouse v${VERSION_N1}`);
        assert.deepEqual(await fileIdentities(versionN), filesN);
        assert.match(
          (await gh(["list-modules", "--versions", "--packages", "-s"])).stdout,
          /^http\.handlers\.greet v1\.1\.1 npm:gatehouse-plugin-greet$/m,
        );
        // without --keep-backup only the new generation stays
        assert.deepEqual([...Deno.readDirSync(`${root}/generations`)].map((e) => e.name), ["3"]);
        // the server started before still loads configs, including modules it never used yet
        const reload = greetConfig(admin, port);
        // deno-lint-ignore no-explicit-any
        (reload as any).apps.http.servers.greet.routes.unshift({
          match: [{ path: ["/h"] }],
          handle: [
            { handler: "headers", response: { set: { "X-Old": ["yes"] } } },
            { handler: "greet", greeting: "Hi" },
          ],
        });
        const loaded = await fetch(`http://127.0.0.1:${admin}/load`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(reload),
        });
        assert.equal(loaded.status, 200, await loaded.text());
        const h = await fetch(`http://127.0.0.1:${port}/h?name=Bo`);
        assert.equal(h.headers.get("x-old"), "yes");
        assert.equal(await h.text(), "Hi, Bo!\n");
      },
    );

    await t.step("start runs the installed entry with its plugins; remove-package -k", async () => {
      const admin2 = freePort();
      const port2 = freePort();
      await Deno.writeTextFile(
        `${world.dir}/greet2.json`,
        JSON.stringify(greetConfig(admin2, port2)),
      );
      // the background server keeps start's stdout and stderr: they go to a file, not a pipe
      const log = `${world.dir}/start.log`;
      const started = await runIn(
        "sh",
        [
          "-c",
          '"$@" > "$LOG" 2>&1',
          "sh",
          launcher,
          "start",
          "-c",
          `${world.dir}/greet2.json`,
        ],
        { ...world.env, LOG: log },
        world.dir,
      );
      assert.equal(started.code, 0, await Deno.readTextFile(log));
      assert.match(await Deno.readTextFile(log), /Successfully started gatehouse/);
      try {
        assert.deepEqual(await get(port2, "?name=Cy"), { status: 200, body: "Hello, Cy!\n" });
      } finally {
        assert.equal((await gh(["stop", "--address", `127.0.0.1:${admin2}`])).code, 0);
      }

      const r = await gh(["remove-package", "-k", "gatehouse-plugin-greet"]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /the previous installation is kept in .*\/generations\/3/);
      assert.equal((await gh(["list-modules", "-s"])).stdout, "\n  Non-standard modules: 0\n");
      assert.deepEqual(
        [...Deno.readDirSync(`${root}/generations`)].map((e) => e.name).sort(),
        ["3", "4"],
      );
      const gone = await gh(["validate", "-c", `${world.dir}/greet.json`]);
      assert.equal(gone.code, 1);
      assert.match(
        gone.stdout + gone.stderr,
        /unknown module: http\.(matchers\.accept_language|handlers\.greet)/,
      );
      assert.equal((await gh(["version"])).stdout.trim(), `gatehouse v${VERSION_N1}`);
    });

    await t.step(
      "a plugin that stops loading: server commands exit 1, remove-package works",
      async () => {
        assert.equal((await gh(["add-package", "gatehouse-plugin-fickle"])).code, 0);
        const broken = { FICKLE_BROKEN: "1" };
        const listed = await gh(["list-modules"], broken);
        assert.equal(listed.code, 1);
        assert.match(
          listed.stderr,
          /gatehouse list-modules: plugin npm:gatehouse-plugin-fickle: importing it failed: fickle: FICKLE_BROKEN is set/,
        );
        assert.equal(listed.stdout, "");
        const removed = await gh(["remove-package", "gatehouse-plugin-fickle"], broken);
        assert.equal(removed.code, 0, removed.stdout + removed.stderr);
        assert.match(
          removed.stderr,
          /gatehouse remove-package: warning: plugin npm:gatehouse-plugin-fickle/,
        );
        assert.equal(
          (await gh(["list-modules", "-s"], broken)).stdout,
          "\n  Non-standard modules: 0\n",
        );
      },
    );

    await t.step(
      "a storage plugin: the CA and the certificates of a server go through caddy.storage.journal",
      async () => {
        const added = await gh(["add-package", "gatehouse-plugin-journal"]);
        assert.equal(added.code, 0, added.stdout + added.stderr);
        assert.equal(
          (await gh(["list-modules", "--packages", "--versions", "-s"])).stdout,
          "caddy.storage.journal v1.0.0 npm:gatehouse-plugin-journal\n\n  Non-standard modules: 1\n",
        );
        const store = `${world.dir}/journal-store`;
        const journal = `${world.dir}/storage.journal`;
        const admin3 = freePort();
        const port3 = freePort();
        const config = (storage: Record<string, unknown>) => ({
          admin: { listen: `127.0.0.1:${admin3}` },
          storage,
          apps: {
            pki: { certificate_authorities: { local: { install_trust: false } } },
            tls: { automation: { policies: [{ issuers: [{ module: "internal" }] }] } },
            http: {
              servers: {
                tls: {
                  listen: [`127.0.0.1:${port3}`],
                  routes: [{
                    match: [{ host: ["localhost"] }],
                    handle: [{ handler: "static_response", body: "stored" }],
                  }],
                },
              },
            },
          },
        });
        const journalStorage = {
          module: "journal",
          journal,
          storage: { module: "file_system", root: store },
        };
        const file = `${world.dir}/journal.json`;
        await Deno.writeTextFile(file, JSON.stringify(config({ ...journalStorage, colour: 1 })));
        const refused = await gh(["validate", "-c", file]);
        assert.equal(refused.code, 1);
        assert.match(
          refused.stdout + refused.stderr,
          /caddy\.storage\.journal: unknown field "colour"/,
        );
        await assert.rejects(Deno.lstat(journal), Deno.errors.NotFound);
        await assert.rejects(Deno.lstat(store), Deno.errors.NotFound);

        // validate provisions the pki app, as Caddy's does: the CA is created in the storage
        await Deno.writeTextFile(file, JSON.stringify(config(journalStorage)));
        const valid = await gh(["validate", "-c", file]);
        assert.equal(valid.code, 0, valid.stdout + valid.stderr);
        const ca = "pki/authorities/local";
        assert.deepEqual((await Deno.readTextFile(journal)).split("\n"), [
          "lock pki_ca_local",
          `store ${ca}/root.crt`,
          `store ${ca}/root.key`,
          `store ${ca}/intermediate.crt`,
          `store ${ca}/intermediate.key`,
          "unlock pki_ca_local",
          "",
        ]);
        const rootCert = await Deno.readTextFile(`${store}/${ca}/root.crt`);

        const server = new Deno.Command(launcher, {
          args: ["run", "-c", file],
          env: world.env,
          cwd: world.dir,
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).spawn();
        const client = Deno.createHttpClient({ caCerts: [rootCert] });
        let stopped = false;
        try {
          let answer = "";
          await until(
            async () => {
              const r = await fetch(`https://localhost:${port3}/`, { client });
              answer = await r.text();
              return r.status === 200;
            },
            30_000,
            "the HTTPS server",
          );
          // the certificate served chains to the root kept in the plugin's storage
          assert.equal(answer, "stored");
        } finally {
          client.close();
          stopped = await fetch(`http://127.0.0.1:${admin3}/stop`, { method: "POST" })
            .then(async (r) => (await r.body?.cancel(), r.ok)).catch(() => false);
          if (!stopped) server.kill("SIGKILL");
        }
        assert.equal((await server.status).code, 0, "the server stopped cleanly");
        const lines = (await Deno.readTextFile(journal)).trim().split("\n").slice(6);
        const site = "certificates/local/localhost/localhost";
        for (const line of [`store ${site}.key`, `store ${site}.crt`, `store ${site}.json`]) {
          assert.ok(lines.includes(line), `${line} in ${lines.join(", ")}`);
        }
        // the run read the CA validate had stored instead of making another one
        assert.ok(!lines.some((l) => l.startsWith(`store ${ca}`)), lines.join(", "));
        for (const line of lines.filter((l) => l.startsWith("store "))) {
          const key = line.slice("store ".length);
          if (key.startsWith("rw_test_")) continue; // the storage check deletes its probe
          assert.ok((await Deno.stat(`${store}/${key}`)).isFile, key);
        }
      },
    );

    await t.step("from a source checkout the package commands explain and exit 1", async () => {
      for (
        const args of [["upgrade"], ["add-package", "gatehouse-plugin-greet"], [
          "remove-package",
          "gatehouse-plugin-greet",
        ]]
      ) {
        const r = await checkout(args);
        assert.equal(r.code, 1, args.join(" "));
        assert.match(r.stderr, /is not an installed one \(it runs file:\/\/.*cli\.ts\)/);
        assert.match(r.stderr, /checks it \(its list-modules must succeed/);
        assert.match(r.stderr, /deno run -A .*cli\.ts install \[--root <dir>\]/);
        assert.equal(r.stdout, "");
      }
      await assert.rejects(Deno.lstat(`${world.dir}/.gatehouse`), Deno.errors.NotFound);
    });
  } finally {
    await fetch(`http://127.0.0.1:${admin}/stop`, { method: "POST" }).then((r) => r.body?.cancel())
      .catch(() => {});
    for (const s of servers) {
      const done = await Promise.race([
        s.status.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 5000)),
      ]);
      if (!done) {
        s.kill("SIGKILL");
        await s.status;
      }
    }
    await world.close();
  }
});
