/**
 * The world of the plugin tests: a real npm registry (verdaccio on a loopback port) with the
 * project's npm mirror and the fixture plugin packages published to it, a temp HOME, and
 * helpers to run an installed gatehouse and to snapshot an install directory.
 *
 * @module
 */
import { type LocalRegistry, startLocalRegistry } from "../../../scripts/local_registry.ts";
import { ROOT, tempEnv } from "../fixtures/helpers.ts";

/** The version in deno.json (the mirror's version N in these tests). */
export const VERSION_N: string = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).version;

/** N+1: the next patch release. */
export const VERSION_N1: string = VERSION_N.replace(/(\d+)$/, (d) => String(Number(d) + 1));

/** A fixture package directory. */
export const FIXTURES = new URL("./fixtures/", import.meta.url).pathname;

/** Output of a finished process. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion with the world's environment. */
export async function runIn(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<Ran> {
  const out = await new Deno.Command(cmd, {
    args,
    env,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

/** Copies a package directory, rewriting its package.json (and deno.json) version. */
export async function copyPackage(from: string, to: string, version: string): Promise<void> {
  await runIn("cp", ["-R", from, to], {});
  for (const file of ["package.json", "deno.json"]) {
    const path = `${to}/${file}`;
    try {
      const json = JSON.parse(await Deno.readTextFile(path));
      json.version = version;
      await Deno.writeTextFile(path, JSON.stringify(json, null, 2) + "\n");
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
}

/** Every file, directory and link under `dir` (but `cache/`) with its mode and bytes. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for await (const e of Deno.readDir(`${dir}/${rel}`)) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (path === "cache") continue;
      const info = await Deno.lstat(`${dir}/${path}`);
      const mode = (info.mode ?? 0).toString(8);
      if (e.isSymlink) out[path] = `link ${await Deno.readLink(`${dir}/${path}`)}`;
      else if (e.isDirectory) {
        out[path] = `dir ${mode}`;
        await walk(path);
      } else {
        const bytes = await Deno.readFile(`${dir}/${path}`);
        const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
        out[path] = `file ${mode} ${
          Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("")
        }`;
      }
    }
  };
  await walk("");
  return out;
}

/** Inode and modification time of every file under `dir`: what "not rewritten" means. */
export async function fileIdentities(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for await (const e of Deno.readDir(`${dir}/${rel}`)) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory) await walk(path);
      else {
        const info = await Deno.lstat(`${dir}/${path}`);
        out[path] = `${info.ino} ${info.mtime?.getTime()}`;
      }
    }
  };
  await walk("");
  return out;
}

/** The registry, the temp directory and the environment of one test. */
export interface World {
  registry: LocalRegistry;
  dir: string;
  env: Record<string, string>;
  /** Publishes a fixture (by directory name) with a version. */
  publishFixture(
    name: string,
    version?: string,
    edit?: (dir: string) => Promise<void>,
  ): Promise<void>;
  /** Publishes the npm mirror built from this checkout, with `version`. */
  publishMirror(version: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts the registry; builds the mirror once (version N) for `publishMirror`. */
export async function openWorld(): Promise<World> {
  const t = await tempEnv();
  const registry = await startLocalRegistry();
  try {
    const mirror = `${t.dir}/mirror`;
    const built = await runIn(
      Deno.execPath(),
      [
        "run",
        "-A",
        "--config",
        `${ROOT}tests/deno.json`,
        `${ROOT}scripts/build_npm.ts`,
        "--out",
        mirror,
        "--version",
        VERSION_N,
        "--no-install",
      ],
      {},
      ROOT,
    );
    if (built.code !== 0) throw new Error(`build_npm failed:\n${built.stderr}`);
    let copies = 0;
    return {
      registry,
      dir: t.dir,
      // the checkout's own packages come from the usual Deno cache, not a fresh one in HOME
      env: {
        ...t.env,
        DENO_DIR: Deno.env.get("DENO_DIR") ??
          `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`,
      },
      async publishFixture(name, version, edit) {
        const dir = `${t.dir}/pkg-${copies++}`;
        await copyPackage(`${FIXTURES}${name}`, dir, version ?? "1.0.0");
        if (edit) await edit(dir);
        await registry.publish(dir);
      },
      async publishMirror(version) {
        if (version === VERSION_N) return await registry.publish(mirror);
        const dir = `${t.dir}/mirror-${copies++}`;
        await copyPackage(mirror, dir, version);
        await registry.publish(dir);
      },
      async close() {
        await registry.stop();
        await Deno.remove(t.dir, { recursive: true }).catch(() => {});
      },
    };
  } catch (e) {
    await registry.stop();
    await Deno.remove(t.dir, { recursive: true }).catch(() => {});
    throw e;
  }
}
