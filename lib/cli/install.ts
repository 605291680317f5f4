/**
 * `gatehouse install`: installs the `gatehouse` command, pinned with its plugin packages, in an
 * install directory (see installation.ts for the layout).
 *
 * @module
 */
import type { Command, Flags } from "./command.ts";
import { ExitCode } from "./command.ts";
import { ChangeError, changeInstallation } from "./install_change.ts";
import { describeManifest, installLayout, launcherSource } from "./installation.ts";
import { packageArguments } from "./add_package.ts";
import { UsageError } from "./usage_error.ts";
import { VERSION } from "../version.ts";

function str(v: Flags[string]): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** The default install directory: `$GATEHOUSE_INSTALL_ROOT`, else `~/.gatehouse`. */
export function defaultInstallRoot(): string {
  const env = Deno.env.get("GATEHOUSE_INSTALL_ROOT");
  if (env) return env;
  const home = Deno.env.get("HOME");
  if (!home) throw new UsageError("install: HOME is not set; give --root <dir>");
  return `${home}/.gatehouse`;
}

function absolute(path: string): string {
  if (path.startsWith("/")) return path;
  return `${Deno.cwd().replace(/\/$/, "")}/${path}`;
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

/** `install`. */
export const installCommand: Command = {
  name: "install",
  usage: "[--root <dir>] [--version <version>] [--from <npm|jsr>] [--registry <url>] " +
    "[--minimum-dependency-age <age>] [<packages...>]",
  short: "Installs the gatehouse command with plugin packages in a directory",
  long: [
    "Installs gatehouse (from the npm registry, or the one NPM_CONFIG_REGISTRY names) and the",
    "listed plugin packages into an install directory: <dir>/bin/gatehouse runs the installed",
    "version, which a lock file pins with every dependency, so that it starts the same way every",
    "time. upgrade, add-package and remove-package of that command change it.",
    "The directory must not hold an installation yet. Nothing is left behind when it fails.",
  ].join("\n"),
  flags: [
    {
      name: "root",
      type: "string",
      value: "<dir>",
      help: "Install directory (default $GATEHOUSE_INSTALL_ROOT, else ~/.gatehouse)",
    },
    {
      name: "version",
      type: "string",
      value: "<version>",
      help: "Gatehouse version, range or tag to install (default: this program's version)",
    },
    {
      name: "from",
      type: "string",
      value: "<npm|jsr>",
      help: "Where gatehouse comes from: the npm mirror or JSR (default npm)",
    },
    {
      name: "registry",
      type: "string",
      value: "<url>",
      help: "npm registry to install from, kept for upgrades (default NPM_CONFIG_REGISTRY)",
    },
    {
      name: "minimum-dependency-age",
      type: "string",
      value: "<age>",
      help: "Only releases this old (minutes, ISO 8601 duration; 0: any); default Deno's",
    },
  ],
  async run({ flags, args }) {
    if (Deno.build.os === "windows") {
      throw new UsageError("install: not supported on Windows (the launcher is a POSIX sh script)");
    }
    const plugins = args.length ? packageArguments("install", args) : [];
    const layout = installLayout(absolute(str(flags.root) ?? defaultInstallRoot()));
    if (await exists(layout.current)) {
      throw new UsageError(
        `install: ${layout.root} already holds an installation; change it with ` +
          `${layout.launcher} upgrade, add-package or remove-package, or remove the directory first`,
      );
    }
    const version = str(flags.version) ?? VERSION;
    const from = str(flags.from) ?? "npm";
    if (from !== "npm" && from !== "jsr") {
      throw new UsageError(`install: --from takes npm or jsr, not ${JSON.stringify(from)}`);
    }
    const registry = str(flags.registry) ?? Deno.env.get("NPM_CONFIG_REGISTRY");
    if (registry && !/^https?:\/\/[^\s"'`$\\]+$/.test(registry)) {
      throw new UsageError(
        `install: --registry takes an http(s) URL, not ${JSON.stringify(registry)}`,
      );
    }
    const rootExisted = await exists(layout.root);
    const created: string[] = [];
    for (const path of [layout.root, `${layout.root}/bin`, layout.generations, layout.cache]) {
      if (!(await exists(path))) {
        await Deno.mkdir(path, { recursive: true });
        created.push(path);
      }
    }
    const lockExisted = await exists(layout.lock);
    const say = (line: string) => console.log(line);
    try {
      const result = await changeInstallation({
        layout,
        deno: Deno.execPath(),
        gatehouse: {
          registry: from,
          name: "@gatehouse/gatehouse",
          range: version === "latest" ? "" : version,
        },
        plugins,
        minimumDependencyAge: str(flags["minimum-dependency-age"]),
        registry,
        keepBackup: false,
        say,
      });
      const tmp = `${layout.launcher}.tmp-${crypto.randomUUID().slice(0, 8)}`;
      await Deno.writeTextFile(
        tmp,
        launcherSource(layout.root, Deno.execPath(), registry),
        { mode: 0o755 },
      );
      await Deno.chmod(tmp, 0o755);
      await Deno.rename(tmp, layout.launcher);
      say(`installed ${describeManifest(result.manifest)} in ${layout.root}`);
      say(`run it as ${layout.launcher} (or add ${layout.root}/bin to PATH)`);
      return ExitCode.Success;
    } catch (e) {
      // nothing of a failed install stays: what this command created goes
      if (!rootExisted) await Deno.remove(layout.root, { recursive: true }).catch(() => {});
      else {
        for (const path of created.reverse()) {
          await Deno.remove(path, { recursive: true }).catch(() => {});
        }
        if (!lockExisted) await Deno.remove(layout.lock).catch(() => {});
        await Deno.remove(layout.current).catch(() => {});
      }
      const reason = e instanceof ChangeError ? e.message : (e as Error)?.message ?? String(e);
      console.error(`gatehouse install: ${reason}`);
      console.error(`Nothing was installed in ${layout.root}.`);
      return ExitCode.Failure;
    }
  },
};
