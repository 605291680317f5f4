/**
 * One change of an installation (install, upgrade, add-package, remove-package), all or
 * nothing: the new generation is written beside the active one, resolved and locked by Deno
 * (`deno install --entrypoint`), its versions read (`deno info --json`), checked by running
 * its own `list-modules --packages --versions` (every plugin package must show modules), and
 * only then made active by replacing `current` atomically. Any failure before that removes
 * the new generation and leaves the installation as it was, byte for byte (the download cache
 * may keep what was downloaded). The previous generation is removed afterwards unless asked to
 * keep it; the packages it used stay in the cache, so servers it runs keep working.
 *
 * @module
 */
import {
  entrySource,
  generationConfig,
  type InstalledPackage,
  type InstallLayout,
  type InstallManifest,
} from "./installation.ts";
import { packageId, type PackageRequest, packageSpecifier } from "./package_spec.ts";

/** Why a change did not happen. */
export type ChangeErrorCode = "busy" | "resolve" | "check" | "activate";

/** A change that failed; the installation is as it was. */
export class ChangeError extends Error {
  /** Stable code, see {@linkcode ChangeErrorCode}. */
  readonly code: ChangeErrorCode;
  /** Builds the error. */
  constructor(code: ChangeErrorCode, message: string) {
    super(message);
    this.name = "ChangeError";
    this.code = code;
  }
}

/** What a change asks for. */
export interface ChangeRequest {
  /** The install directory. */
  layout: InstallLayout;
  /** The Deno executable that resolves and runs the installation. */
  deno: string;
  /** Gatehouse as the new entry imports it (`range` empty: the latest release). */
  gatehouse: PackageRequest;
  /** The plugin packages of the new installation. */
  plugins: PackageRequest[];
  /** Deno's `minimumDependencyAge`, kept from the installation. */
  minimumDependencyAge?: string;
  /** The npm registry (else `NPM_CONFIG_REGISTRY` of the environment, else npm's). */
  registry?: string;
  /** The active generation being replaced, if any. */
  previous?: string;
  /** Keep the previous generation's directory instead of removing it. */
  keepBackup: boolean;
  /** Progress lines. */
  say(line: string): void;
}

/** What a change did. */
export interface ChangeResult {
  /** The new active generation. */
  generation: string;
  /** Its manifest. */
  manifest: InstallManifest;
  /** The previous generation's directory when it was kept. */
  kept?: string;
}

const MAX_OUTPUT_LINES = 20;

/** The interesting part of a Deno error output: `error:` lines and what follows, no colours. */
function denoErrorText(stderr: string): string {
  // deno-lint-ignore no-control-regex
  const lines = stderr.replace(/\x1b\[[0-9;]*m/g, "").split("\n")
    .filter((l) =>
      l.trim() !== "" && !/^\s*Download /.test(l) &&
      !/^(Stack backtrace:|\s+\d+: <unknown>)$/.test(l)
    );
  const first = lines.findIndex((l) => /^(error|Error)\b/.test(l.trim()));
  const shown = (first < 0 ? lines : lines.slice(first)).slice(0, MAX_OUTPUT_LINES);
  return shown.join("\n").trim() || "(no output)";
}

async function deno(
  req: ChangeRequest,
  cwd: string,
  args: string[],
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const out = await new Deno.Command(req.deno, {
    args,
    cwd,
    env: {
      DENO_DIR: req.layout.cache,
      DENO_NO_PACKAGE_JSON: "1",
      NO_COLOR: "1",
      ...(req.registry ? { NPM_CONFIG_REGISTRY: req.registry } : {}),
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { ok: out.success, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

interface DenoInfo {
  redirects: Record<string, string>;
  modules: { specifier: string; kind?: string; npmPackage?: string; error?: string }[];
  npmPackages: Record<string, { name: string; version: string }>;
}

/** The version a specifier of the entry resolved to, or the resolution error. */
function resolvedVersion(info: DenoInfo, specifier: string): { version?: string; error?: string } {
  const target = info.redirects[specifier] ?? specifier;
  const mod = info.modules.find((m) => m.specifier === target || m.specifier === specifier);
  if (!mod) return { error: `${specifier} is not in the module graph` };
  if (mod.error) return { error: mod.error };
  if (mod.npmPackage) {
    const v = info.npmPackages[mod.npmPackage]?.version;
    if (v) return { version: v };
  }
  const jsr = target.match(/^https?:\/\/[^/]+\/@[^/]+\/[^/]+\/([^/]+)\//);
  if (jsr) return { version: jsr[1] };
  const npm = target.match(/^npm:\/?(?:@[^/@]+\/)?[^/@]+@([^/]+)/);
  if (npm) return { version: npm[1] };
  return { error: `cannot tell the version of ${specifier} (resolved to ${target})` };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** The next generation name: one more than the highest numbered one. */
async function nextGeneration(layout: InstallLayout): Promise<string> {
  let max = 0;
  for await (const e of Deno.readDir(layout.generations)) {
    if (/^\d+$/.test(e.name)) max = Math.max(max, Number(e.name));
  }
  return String(max + 1);
}

/** Removes what an interrupted change left (`generations/.new-*`, `current.tmp-*`). */
async function removeLeftovers(layout: InstallLayout): Promise<void> {
  for await (const e of Deno.readDir(layout.generations)) {
    if (e.name.startsWith(".new-")) {
      await Deno.remove(`${layout.generations}/${e.name}`, { recursive: true });
    }
  }
  for await (const e of Deno.readDir(layout.root)) {
    if (e.name.startsWith("current.tmp-")) await Deno.remove(`${layout.root}/${e.name}`);
  }
}

/**
 * Drops the cached registry metadata (`npm/<registry>/<name>/registry.json` in the
 * installation's DENO_DIR) of the packages asked for, so that resolving them asks the registry
 * for its latest releases. Deno's `--reload=npm:<name>` would do that too, but it also rewrites
 * the package's files in place, which a running server of the same version may be loading.
 * Locked programs do not need this metadata to start.
 */
async function forgetNpmMetadata(cache: string, packages: PackageRequest[]): Promise<void> {
  let registries: string[];
  try {
    registries = (await Array.fromAsync(Deno.readDir(`${cache}/npm`)))
      .filter((e) => e.isDirectory).map((e) => `${cache}/npm/${e.name}`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  for (const registry of registries) {
    for (const p of packages) {
      await Deno.remove(`${registry}/${p.name}/registry.json`).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
    }
  }
}

/** Writes, resolves, locks and checks a new generation in `dir`; returns its manifest. */
async function build(req: ChangeRequest, dir: string): Promise<InstallManifest> {
  const entry = entrySource(req.gatehouse, req.plugins);
  await Deno.writeTextFile(`${dir}/main.ts`, entry);
  await Deno.writeTextFile(`${dir}/deno.json`, generationConfig(req.minimumDependencyAge));
  const names = [req.gatehouse, ...req.plugins].map((p) => packageSpecifier(p)).join(", ");
  req.say(`resolving ${names}`);
  // fresh registry metadata for the packages asked for, so that "latest" is the latest
  const requested = [req.gatehouse, ...req.plugins];
  await forgetNpmMetadata(req.layout.cache, requested.filter((p) => p.registry === "npm"));
  const jsr = requested.filter((p) => p.registry === "jsr").map((p) => packageId(p));
  const installed = await deno(req, dir, [
    "install",
    "--entrypoint",
    "--frozen=false",
    ...(jsr.length ? [`--reload=${jsr.join(",")}`] : []),
    "--config",
    "deno.json",
    "main.ts",
  ]);
  if (!installed.ok) {
    throw new ChangeError(
      "resolve",
      `resolving the packages failed:\n${denoErrorText(installed.stderr)}`,
    );
  }
  const infoRun = await deno(req, dir, ["info", "--json", "--config", "deno.json", "main.ts"]);
  if (!infoRun.ok) {
    throw new ChangeError(
      "resolve",
      `reading the resolved versions failed:\n${denoErrorText(infoRun.stderr)}`,
    );
  }
  const info = JSON.parse(infoRun.stdout) as DenoInfo;
  const pin = (request: PackageRequest, specifier: string): InstalledPackage => {
    const got = resolvedVersion(info, specifier);
    if (!got.version) {
      throw new ChangeError(
        "resolve",
        `${packageSpecifier(request)} could not be resolved: ${got.error}`,
      );
    }
    return {
      request: packageSpecifier(request),
      package: packageId(request),
      version: got.version,
    };
  };
  const gatehouse = pin(req.gatehouse, packageSpecifier(req.gatehouse, "/cli"));
  // upgrade always means the latest release of gatehouse itself
  gatehouse.request = packageId(req.gatehouse);
  const manifest: InstallManifest = {
    format: 1,
    gatehouse,
    plugins: req.plugins.map((p) => pin(p, packageSpecifier(p))),
    ...(req.minimumDependencyAge !== undefined
      ? { minimumDependencyAge: req.minimumDependencyAge }
      : {}),
    created: new Date().toISOString(),
  };
  await Deno.writeTextFile(`${dir}/gatehouse.json`, JSON.stringify(manifest, null, 2) + "\n");

  req.say("checking the new installation: list-modules --packages --versions");
  const check = await deno(req, dir, [
    "run",
    "-A",
    "--config",
    "deno.json",
    "main.ts",
    "list-modules",
    "--packages",
    "--versions",
  ]);
  if (!check.ok) {
    throw new ChangeError(
      "check",
      `the new installation failed its check (list-modules):\n${
        denoErrorText(check.stderr || check.stdout)
      }`,
    );
  }
  // A module line names a module id, `v<version>` and the package, in Caddy's layout; the
  // test looks for the tokens, not their order, so that an older gatehouse can check a newer.
  const listed = check.stdout.split("\n").map((l) => l.trim().split(/\s+/));
  const lists = (pkg: InstalledPackage) =>
    listed.some((f) => f.length >= 3 && f.includes(`v${pkg.version}`) && f.includes(pkg.package));
  for (const p of manifest.plugins) {
    if (!lists(p)) {
      throw new ChangeError(
        "check",
        `the new installation lists no module of ${p.package} ${p.version}`,
      );
    }
  }
  if (!lists(gatehouse)) {
    throw new ChangeError(
      "check",
      `the new installation does not list the standard modules of gatehouse v${gatehouse.version}`,
    );
  }
  return manifest;
}

/** Takes the install directory's change lock for `fn`; refuses when another change holds it. */
async function withChangeLock<T>(layout: InstallLayout, fn: () => Promise<T>): Promise<T> {
  const file = await Deno.open(layout.lock, { read: true, write: true, create: true });
  try {
    if (!(await file.tryLock(true))) {
      throw new ChangeError(
        "busy",
        `another install, upgrade, add-package or remove-package is changing ${layout.root}; ` +
          "try again when it is done",
      );
    }
    return await fn();
  } finally {
    file.close();
  }
}

/**
 * Builds, checks and activates a new generation; all or nothing (see the module doc).
 * Throws a {@linkcode ChangeError} and leaves the installation unchanged on failure.
 *
 * @example
 * ```ts ignore
 * import { changeInstallation } from "./install_change.ts";
 * import { installLayout } from "./installation.ts";
 * await changeInstallation({
 *   layout: installLayout("/opt/gatehouse"),
 *   deno: Deno.execPath(),
 *   gatehouse: { registry: "npm", name: "@gatehouse/gatehouse", range: "" },
 *   plugins: [],
 *   previous: "3",
 *   keepBackup: false,
 *   say: console.log,
 * });
 * ```
 */
export function changeInstallation(req: ChangeRequest): Promise<ChangeResult> {
  const { layout } = req;
  return withChangeLock(layout, async () => {
    await Deno.mkdir(layout.generations, { recursive: true });
    await Deno.mkdir(layout.cache, { recursive: true });
    await removeLeftovers(layout);
    const active = (await exists(layout.current))
      ? (await Deno.readTextFile(layout.current)).trim()
      : undefined;
    if (active !== req.previous) {
      throw new ChangeError(
        "busy",
        req.previous === undefined
          ? `${layout.root} already holds an installation (generation ${active})`
          : `this gatehouse runs generation ${req.previous} of ${layout.root}, but the active ` +
            `one is ${active ?? "none"} (changed meanwhile, or run directly): run ` +
            `${layout.launcher} instead`,
      );
    }
    const token = crypto.randomUUID().slice(0, 8);
    const building = `${layout.generations}/.new-${token}`;
    await Deno.mkdir(building);
    let manifest: InstallManifest;
    let generation: string;
    try {
      manifest = await build(req, building);
      generation = await nextGeneration(layout);
      await Deno.rename(building, `${layout.generations}/${generation}`);
    } catch (e) {
      await Deno.remove(building, { recursive: true }).catch(() => {});
      if (e instanceof ChangeError) throw e;
      throw new ChangeError(
        "activate",
        `preparing the new installation failed: ${(e as Error).message}`,
      );
    }
    const tmp = `${layout.root}/current.tmp-${token}`;
    try {
      await Deno.writeTextFile(tmp, `${generation}\n`);
      await Deno.rename(tmp, layout.current);
    } catch (e) {
      await Deno.remove(tmp).catch(() => {});
      await Deno.remove(`${layout.generations}/${generation}`, { recursive: true }).catch(() => {});
      throw new ChangeError(
        "activate",
        `switching to the new installation failed: ${(e as Error).message}`,
      );
    }
    let kept: string | undefined;
    if (req.previous !== undefined) {
      const old = `${layout.generations}/${req.previous}`;
      if (req.keepBackup) kept = old;
      else {
        await Deno.remove(old, { recursive: true }).catch((e) =>
          req.say(`note: could not remove the previous installation ${old}: ${e.message}`)
        );
      }
    }
    return { generation, manifest, kept };
  });
}
