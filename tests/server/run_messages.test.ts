/**
 * What `gatehouse run` and the commands that talk to a server say, through the real command
 * line: which config file it took (Caddy 2.6.2's words, compared with the real `caddy`), a warning
 * naming the file taken when a Gatehousefile and a Caddyfile are both there, the address that is
 * in use, `connection refused at <address>` when no server listens, a hint that the local CA is
 * not trusted yet (`gatehouse trust`), and no warning on an ordinary HTTPS start.
 */
import assert from "node:assert/strict";
import { freePort, runCli, spawnCli, tempEnv, until } from "./fixtures/helpers.ts";
import { systemTrusts } from "../../lib/server/pki/truststore.ts";

function caddyInstalled(): boolean {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}
const HAVE_CADDY = caddyInstalled();

interface Rec {
  level?: string;
  msg?: string;
  [k: string]: unknown;
}

/** The JSON log records of a process's output. */
function records(text: string): Rec[] {
  return text.split("\n").flatMap((l) => {
    try {
      const r = JSON.parse(l);
      return typeof r === "object" && r && typeof r.msg === "string" ? [r as Rec] : [];
    } catch {
      return [];
    }
  });
}

/** The warnings and errors logged, but the one about the test's own SIGTERM. */
function warnings(recs: Rec[]): string[] {
  return recs.filter((r) => (r.level === "warn" || r.level === "error") && r.msg !== "exiting")
    .map((r) => String(r.msg));
}

/** Runs `gatehouse run` in `dir` until `msg` is logged (or it exits), then stops it. */
async function runUntil(
  dir: string,
  env: Record<string, string>,
  args: string[],
  done: (recs: Rec[]) => boolean,
): Promise<{ recs: Rec[]; out: string; code: number }> {
  const p = spawnCli(["run", ...args], env, dir);
  let exited = false;
  p.status.then(() => (exited = true));
  try {
    await until(() => exited || done(records(p.output())), 60000, "the server's start");
  } finally {
    try {
      p.child.kill("SIGTERM");
    } catch { /* exited */ }
  }
  const { code } = await p.status;
  return { recs: records(p.output()), out: p.output(), code };
}

/** A plain HTTP site (no certificate, so nothing to say about a CA). */
const site = (port: number, admin: number, body = "hi") =>
  `{\n\tadmin 127.0.0.1:${admin}\n}\nhttp://127.0.0.1:${port} {\n\trespond "${body}"\n}\n`;

Deno.test("run: the adjacent config file it took, in Caddy's words; a warning when both are there", async () => {
  const t = await tempEnv();
  try {
    const admin = freePort();
    const port = freePort();
    const started = (recs: Rec[]) => recs.some((r) => r.msg === "serving initial configuration");

    // a Caddyfile alone: what Caddy says too
    await Deno.writeTextFile(`${t.dir}/Caddyfile`, site(port, admin, "caddyfile"));
    const caddyfile = await runUntil(t.dir, t.env, [], started);
    const used = caddyfile.recs.find((r) => r.msg?.startsWith("using adjacent"));
    assert.equal(used?.msg, "using adjacent Caddyfile", caddyfile.out);
    assert.equal(used?.config_file, `${t.dir}/Caddyfile`);
    assert.equal(used?.level, "info");
    if (HAVE_CADDY) {
      const caddy = await new Deno.Command("caddy", {
        args: ["adapt"], // reads the adjacent Caddyfile as `run` does, and says so alike
        cwd: t.dir,
        env: t.env,
        stdout: "null",
        stderr: "piped",
      }).output();
      const said = records(new TextDecoder().decode(caddy.stderr)).map((r) => r.msg);
      assert.ok(said.includes("using adjacent Caddyfile"), said.join("\n"));
    }

    // both: the Gatehousefile is taken, and the warning names both
    await Deno.writeTextFile(`${t.dir}/Gatehousefile`, site(port, admin, "gatehousefile"));
    const both = await runUntil(t.dir, t.env, [], started);
    assert.ok(both.recs.some((r) => r.msg === "using adjacent Gatehousefile"), both.out);
    const warn = both.recs.find((r) => r.level === "warn" && r.msg?.includes("both"));
    assert.equal(
      warn?.msg,
      "Gatehousefile and Caddyfile are both in the current directory: using Gatehousefile, " +
        "not Caddyfile (name one with --config)",
    );
    assert.deepEqual(warn?.ignored, ["Caddyfile"]);

    // named with --config: "using provided configuration", as Caddy
    const named = await runUntil(t.dir, t.env, ["--config", "Caddyfile"], started);
    const provided = named.recs.find((r) => r.msg === "using provided configuration");
    assert.equal(provided?.config_file, "Caddyfile", named.out);
    assert.equal(provided?.config_adapter, "");
    assert.deepEqual(warnings(named.recs), [], named.out);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

/**
 * The adapted JSON of the Gatehousefile in `dir`, every server on the `engine` listener engine
 * (the node engine has no Gatehousefile option), written to `config.json`.
 */
async function onEngine(dir: string, env: Record<string, string>, engine: string) {
  const adapted = await runCli(["adapt", "--config", "Gatehousefile"], env, dir);
  assert.equal(adapted.code, 0, adapted.out);
  const json = JSON.parse(adapted.stdout);
  for (const srv of Object.values(json.apps.http.servers) as Record<string, unknown>[]) {
    srv.listener_engine = engine;
  }
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(json));
}

for (const engine of ["deno", "node"]) {
  Deno.test(`run (${engine} engine): a listen address in use is named in the error`, async () => {
    const t = await tempEnv();
    const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const port = (taken.addr as Deno.NetAddr).port;
      await Deno.writeTextFile(`${t.dir}/Gatehousefile`, site(port, freePort()));
      let args = ["run"]; // the default engine (deno) from the adjacent Gatehousefile
      if (engine !== "deno") {
        await onEngine(t.dir, t.env, engine);
        args = ["run", "--config", "config.json"];
      }
      const r = await runCli(args, t.env, t.dir);
      assert.equal(r.code, 1, r.out);
      assert.match(
        r.out,
        // the listen address of the site (`:port`, as Caddy's adapter makes it)
        new RegExp(`gatehouse run: .*http: listening on :${port}: address already in use`),
      );
      assert.doesNotMatch(r.out, /os error 98|EADDRINUSE/);
      if (HAVE_CADDY && engine === "deno") {
        // Caddy names it the same way
        const caddy = await new Deno.Command("caddy", {
          args: ["run", "--config", "Gatehousefile", "--adapter", "caddyfile"],
          cwd: t.dir,
          env: t.env,
          stdout: "null",
          stderr: "piped",
        }).output();
        assert.match(
          new TextDecoder().decode(caddy.stderr),
          new RegExp(`listening on :${port}: .*address already in use`),
        );
      }
    } finally {
      taken.close();
      await Deno.remove(t.dir, { recursive: true });
    }
  });
}

Deno.test("stop, reload, trust: no server at the admin address is `connection refused at <address>`", async () => {
  const t = await tempEnv();
  try {
    const dead = `127.0.0.1:${freePort()}`;
    for (const args of [["stop"], ["reload", "-c", "/dev/null"], ["trust"]]) {
      const r = await runCli([...args, "--address", dead], t.env, t.dir);
      assert.equal(r.code, 1, r.out);
      assert.ok(
        r.out.includes(
          `connection refused at ${dead} (is the server running? start it with \`gatehouse ` +
            "run` or `gatehouse start`, or name its admin address with --address)",
        ),
        r.out,
      );
      assert.doesNotMatch(r.out, /fetch failed/);
    }
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

for (const engine of ["deno", "node"]) {
  Deno.test(`run (${engine} engine): an HTTPS start warns only that the local CA is not trusted yet`, async () => {
    const t = await tempEnv();
    try {
      const port = freePort();
      const admin = freePort();
      await Deno.writeTextFile(
        `${t.dir}/Gatehousefile`,
        `{\n\tadmin 127.0.0.1:${admin}\n\thttp_port ${freePort()}\n}\n` +
          `localhost:${port} {\n\trespond "Hello over HTTPS"\n}\n`,
      );
      await onEngine(t.dir, t.env, engine);
      const obtained = (recs: Rec[]) =>
        recs.some((r) => r.msg === "certificate obtained successfully");
      const p = spawnCli(["run", "--config", "config.json"], t.env, t.dir);
      try {
        await until(() => obtained(records(p.output())), 60000, "the certificate");
        // the answer comes with the certificate (the listener took it over quietly)
        await until(
          async () => {
            const r = await new Deno.Command("curl", {
              args: ["-sk", `https://localhost:${port}/`],
              stdout: "piped",
              stderr: "null",
            }).output();
            return new TextDecoder().decode(r.stdout) === "Hello over HTTPS";
          },
          30000,
          "the HTTPS answer",
        );
      } finally {
        try {
          p.child.kill("SIGTERM");
        } catch { /* exited */ }
        await p.status;
      }
      const recs = records(p.output());
      const warned = warnings(recs);
      const trusted = await systemTrusts(
        await Deno.readTextFile(
          `${t.dir}/data/gatehouse/pki/authorities/local/root.crt`,
        ),
      );
      const hint = "the root certificate of CA local is not trusted by this system yet: " +
        "browsers and curl refuse the certificates it issues until `gatehouse trust` installs " +
        'it (or "install_trust": true in the CA\'s config)';
      assert.deepEqual(
        warned,
        trusted === false ? [hint] : [],
        p.output(),
      );
      assert.ok(!recs.some((r) => String(r.msg).startsWith("certificates changed")));
    } finally {
      await Deno.remove(t.dir, { recursive: true });
    }
  });
}
