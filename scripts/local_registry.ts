/**
 * A real npm registry on a loopback port for tests and trials: verdaccio (run with npm's own
 * `npm exec`, never a dependency of the project), with temporary storage, one user whose token
 * publishes with `npm publish`, packages named `@gatehouse/*`, `gatehouse-plugin-*` and
 * `@jsr/gatehouse__*` (the name JSR's npm layer gives a package of the `@gatehouse` scope)
 * served only from what was published here, every other package proxied from the npm registry
 * npm is configured with.
 *
 * ```sh
 * # a registry on 127.0.0.1:31000 with the npm mirror and the sample plugin published
 * deno run -A scripts/local_registry.ts --port 31000 --publish-mirror \
 *   --publish tests/server/plugins/fixtures/greet
 * ```
 *
 * @module
 */

/** The verdaccio release used: later ones depend on npm dist-tags the registry here lacks. */
export const VERDACCIO = "verdaccio@5.20.1";

/** A running local registry. */
export interface LocalRegistry {
  /** Base URL, with a trailing slash: `http://127.0.0.1:<port>/`. */
  url: string;
  /** Publishes a package directory (`npm publish <dir>`); throws with npm's output on failure. */
  publish(dir: string): Promise<void>;
  /** Stops verdaccio and removes its storage. */
  stop(): Promise<void>;
}

async function run(cmd: string, args: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed:\n${text.decode(out.stderr)}`);
  }
  return text.decode(out.stdout);
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** The verdaccio executable from npm's exec cache (installed there on first use). */
async function verdaccioBin(): Promise<string> {
  const out = await run("npm", [
    "exec",
    "--yes",
    "--package",
    VERDACCIO,
    "--",
    "sh",
    "-c",
    "command -v verdaccio",
  ]);
  const bin = out.trim().split("\n").pop() ?? "";
  if (!bin.includes("verdaccio")) throw new Error(`cannot find verdaccio (npm exec said ${out})`);
  return bin;
}

/**
 * Starts verdaccio on a free loopback port (or `port`) and resolves once it answers.
 *
 * @example
 * ```ts ignore
 * import { startLocalRegistry } from "./local_registry.ts";
 * const registry = await startLocalRegistry();
 * await registry.publish("tests/server/plugins/fixtures/greet");
 * await registry.stop();
 * ```
 */
export async function startLocalRegistry(options: { port?: number } = {}): Promise<LocalRegistry> {
  const bin = await verdaccioBin();
  const upstream = (await run("npm", ["config", "get", "registry"]).catch(() => "")).trim() ||
    "https://registry.npmjs.org/";
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-registry-" });
  const port = options.port ?? freePort();
  const url = `http://127.0.0.1:${port}/`;
  await Deno.writeTextFile(
    `${dir}/config.yaml`,
    [
      `storage: ${dir}/storage`,
      "auth:",
      "  htpasswd:",
      `    file: ${dir}/htpasswd`,
      "    max_users: 10",
      "uplinks:",
      "  upstream:",
      `    url: ${upstream}`,
      "    timeout: 60s",
      "packages:",
      "  '@gatehouse/*':",
      "    access: $all",
      "    publish: $authenticated",
      "  'gatehouse-plugin-*':",
      "    access: $all",
      "    publish: $authenticated",
      // a stand-in for JSR's npm layer, which names @gatehouse/gatehouse so
      "  '@jsr/gatehouse__*':",
      "    access: $all",
      "    publish: $authenticated",
      "  '**':",
      "    access: $all",
      "    proxy: upstream",
      "log: { type: stdout, format: pretty, level: error }",
      "",
    ].join("\n"),
  );
  const child = new Deno.Command("node", {
    args: [bin, "--config", `${dir}/config.yaml`, "--listen", `127.0.0.1:${port}`],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const log: string[] = [];
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const text = new TextDecoder();
    for await (const chunk of s) log.push(text.decode(chunk, { stream: true }));
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await child.status;
    await drained;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await fetch(`${url}-/ping`).then((r) => (r.body?.cancel(), r.ok), () => false);
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`verdaccio did not answer:\n${log.join("")}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const user = await fetch(`${url}-/user/org.couchdb.user:gatehouse`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "gatehouse", password: crypto.randomUUID() }),
    });
    const { token } = await user.json() as { token?: string };
    if (!token) throw new Error(`verdaccio gave no token (status ${user.status})`);
    const npmrc = `${dir}/npmrc`;
    await Deno.writeTextFile(npmrc, `//127.0.0.1:${port}/:_authToken=${token}\n`);
    return {
      url,
      async publish(pkgDir: string) {
        await run("npm", ["publish", pkgDir, "--registry", url, "--userconfig", npmrc]);
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

if (import.meta.main) {
  const arg = (name: string) => {
    const i = Deno.args.indexOf(`--${name}`);
    return i < 0 ? undefined : Deno.args[i + 1];
  };
  const registry = await startLocalRegistry({
    port: arg("port") ? Number(arg("port")) : undefined,
  });
  const root = decodeURIComponent(new URL("../", import.meta.url).pathname);
  if (Deno.args.includes("--publish-mirror")) {
    const out = await Deno.makeTempDir({ prefix: "gatehouse-mirror-" });
    await run(Deno.execPath(), [
      "run",
      "-A",
      "--config",
      `${root}tests/deno.json`,
      `${root}scripts/build_npm.ts`,
      "--out",
      out,
      "--no-install",
    ]);
    await registry.publish(out);
    await Deno.remove(out, { recursive: true });
  }
  for (const [i, a] of Deno.args.entries()) {
    if (Deno.args[i - 1] === "--publish") await registry.publish(a);
  }
  console.log(`npm registry at ${registry.url} (Ctrl-C stops it)`);
  Deno.addSignalListener("SIGINT", async () => {
    await registry.stop();
    Deno.exit(0);
  });
}
