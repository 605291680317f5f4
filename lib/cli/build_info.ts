/**
 * `gatehouse build-info`: the main module, gatehouse's package and version, the plugin
 * packages, every locked dependency with its integrity hash (an installed gatehouse; else the
 * ranges of deno.json), the installation, and the runtime versions. Tab-separated lines, in the
 * spirit of Go's build info.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { currentInstallation, gatehousePackage, loadedPlugins } from "./plugins.ts";
import denoJson from "../../deno.json" with { type: "json" };

interface LockFile {
  npm?: Record<string, { integrity?: string }>;
  jsr?: Record<string, { integrity?: string }>;
}

/** `dep` lines from a Deno lock file: every npm and JSR package with version and integrity. */
function lockedDeps(lock: LockFile, main: string): string[] {
  const lines: string[] = [];
  for (const [registry, entries] of [["npm", lock.npm], ["jsr", lock.jsr]] as const) {
    for (const [key, value] of Object.entries(entries ?? {})) {
      const m = key.match(/^((?:@[^/@]+\/)?[^/@]+)@([^_]+)/);
      if (!m || `${registry}:${m[1]}` === main) continue;
      lines.push(`dep\t${registry}:${m[1]}\tv${m[2]}\t${value.integrity ?? ""}`.trimEnd());
    }
  }
  return lines.sort();
}

async function dependencyLines(): Promise<string[]> {
  const installation = currentInstallation();
  if (installation) {
    try {
      const lock = JSON.parse(await Deno.readTextFile(`${installation.dir}/deno.lock`));
      return lockedDeps(lock as LockFile, installation.manifest.gatehouse.package);
    } catch (e) {
      return [`dep\t(unreadable lock file ${installation.dir}/deno.lock: ${(e as Error).message})`];
    }
  }
  return Object.entries(denoJson.imports as Record<string, string>)
    .filter(([k]) => !k.endsWith("/"))
    .map(([k, v]) => `dep\t${k}\t${v}`);
}

/** `build-info`. */
export const buildInfoCommand: Command = {
  name: "build-info",
  usage: "",
  short: "Prints build information",
  long: [
    "Prints the main module, gatehouse's package and version, the plugin packages, the",
    "dependencies (locked versions and integrity hashes in an installed gatehouse, deno.json",
    "ranges otherwise), the installation and the runtime versions.",
  ].join("\n"),
  flags: [],
  async run() {
    const gatehouse = gatehousePackage();
    const installation = currentInstallation();
    const lines = [
      `path\t${Deno.mainModule}`,
      `mod\t${gatehouse.package}\tv${gatehouse.version}`,
      ...loadedPlugins().map((p) => `plugin\t${p.package}\tv${p.version}\t${p.ids.join(",")}`),
      ...await dependencyLines(),
      ...(installation
        ? [
          `build\tinstall=${installation.layout.root}`,
          `build\tgeneration=${installation.generation}`,
          `build\tcreated=${installation.manifest.created}`,
          ...(installation.manifest.minimumDependencyAge !== undefined
            ? [`build\tminimum_dependency_age=${installation.manifest.minimumDependencyAge}`]
            : []),
        ]
        : []),
      `runtime\tdeno\t${Deno.version.deno}`,
      `runtime\tv8\t${Deno.version.v8}`,
      `runtime\ttypescript\t${Deno.version.typescript}`,
    ];
    console.log(lines.join("\n"));
    return ExitCode.Success;
  },
};
