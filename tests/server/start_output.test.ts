/**
 * What a server process says at start: `file-server` and `reverse-proxy` tell what they serve
 * as Caddy 2.6.2 does (compared with the real `caddy`), and a failed start logs the exit code
 * the process really exits with.
 */
import assert from "node:assert/strict";
import { freePort, spawnCli, tempEnv, until } from "./fixtures/helpers.ts";

function caddyInstalled(): boolean {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}
const HAVE_CADDY = caddyInstalled();

/** A process with everything it wrote collected. */
interface Proc {
  stdout: () => string;
  stderr: () => string;
  stop: () => Promise<number>;
}

function spawnCaddy(args: string[], env: Record<string, string>, cwd: string): Proc {
  const child = new Deno.Command("caddy", {
    args,
    env,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let err = "";
  const dec = new TextDecoder();
  const drain = Promise.all([
    (async () => {
      for await (const c of child.stdout) out += dec.decode(c);
    })(),
    (async () => {
      for await (const c of child.stderr) err += dec.decode(c);
    })(),
  ]);
  return {
    stdout: () => out,
    stderr: () => err,
    stop: async () => {
      child.kill("SIGTERM");
      await drain;
      return (await child.status).code;
    },
  };
}

function spawnOurs(args: string[], env: Record<string, string>, cwd: string): Proc {
  const p = spawnCli(args, env, cwd);
  return {
    stdout: p.stdout,
    stderr: () => p.output().slice(0), // stdout and stderr interleaved; records are JSON lines
    stop: async () => {
      p.child.kill("SIGTERM");
      return (await p.status).code;
    },
  };
}

/** The `msg` of every JSON log record in `text`. */
function messages(text: string): string[] {
  return text.split("\n").flatMap((l) => {
    try {
      const rec = JSON.parse(l);
      return typeof rec.msg === "string" ? [rec.msg] : [];
    } catch {
      return [];
    }
  });
}

Deno.test({
  name: "file-server and reverse-proxy say what they serve at start, as Caddy 2.6.2 does",
  ignore: !HAVE_CADDY,
  async fn() {
    const t = await tempEnv();
    await Deno.writeTextFile(`${t.dir}/index.html`, "files");
    const backend = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("upstream"),
    );
    const up = `127.0.0.1:${backend.addr.port}`;
    try {
      // file-server: one log record "... serving static files on <listen>"
      const said: string[] = [];
      for (const [spawn, name] of [[spawnCaddy, "Caddy"], [spawnOurs, "Gatehouse"]] as const) {
        const port = freePort();
        const p = spawn(["file-server", "--listen", `127.0.0.1:${port}`], t.env, t.dir);
        try {
          await until(
            () => messages(p.stderr()).some((m) => m.includes("serving static files")),
            30000,
            `${name} file-server`,
          );
          assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "files");
          said.push(
            messages(p.stderr()).find((m) => m.includes("serving static files"))!
              .replace(name, "<server>").replace(String(port), "<port>"),
          );
        } finally {
          await p.stop();
        }
      }
      assert.equal(said[1], said[0]);
      assert.equal(said[0], "<server> serving static files on 127.0.0.1:<port>");

      // reverse-proxy: one stdout line per upstream, then the policy when there are several
      const printed: string[] = [];
      for (const [spawn, name] of [[spawnCaddy, "Caddy"], [spawnOurs, "Gatehouse"]] as const) {
        const port = freePort();
        // no host in --from: no certificate is asked for (nothing touches a trust store)
        const p = spawn(
          ["reverse-proxy", "--from", `:${port}`, "--to", up, "--to", `localhost:${port + 1}`],
          t.env,
          t.dir,
        );
        try {
          await until(() => p.stdout().includes("Load balancing"), 30000, `${name} proxy`);
          assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).status < 600, true);
          printed.push(
            p.stdout().replaceAll(name, "<server>").replaceAll(String(port + 1), "<p2>")
              .replaceAll(String(port), "<port>"),
          );
        } finally {
          await p.stop();
        }
      }
      assert.equal(printed[1], printed[0]);
      assert.equal(
        printed[0],
        `<server> proxying http://:<port> -> ${up}\n` +
          `<server> proxying http://:<port> -> localhost:<p2>\nLoad balancing policy: random\n`,
      );
    } finally {
      await backend.shutdown();
      await Deno.remove(t.dir, { recursive: true });
    }
  },
});

Deno.test("a failed start logs the exit code the process exits with (1), never 0", async () => {
  const t = await tempEnv();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (taken.addr as Deno.NetAddr).port;
  try {
    await Deno.writeTextFile(
      `${t.dir}/c.json`,
      JSON.stringify({
        apps: { http: { servers: { s: { listen: [`127.0.0.1:${port}`], routes: [] } } } },
      }),
    );
    const runs: [string, string[], Record<string, string>][] = [
      ["run", ["run", "-c", `${t.dir}/c.json`], { GATEHOUSE_ADMIN: `127.0.0.1:${freePort()}` }],
      ["file-server", ["file-server", "--listen", `127.0.0.1:${port}`], {}],
      ["respond", ["respond", "--listen", `127.0.0.1:${port}`, "x"], {}],
    ];
    for (const [name, args, env] of runs) {
      const p = spawnCli(args, { ...t.env, ...env }, t.dir);
      const status = await p.status;
      assert.equal(status.code, 1, `${name}: ${p.output()}`);
      const codes = p.output().split("\n").flatMap((l) => {
        try {
          const rec = JSON.parse(l);
          return "exit_code" in rec ? [rec.exit_code] : [];
        } catch {
          return [];
        }
      });
      assert.deepEqual(codes, [1], `${name}: the log reports exit code 1 once`);
    }
  } finally {
    taken.close();
    await Deno.remove(t.dir, { recursive: true });
  }
});
