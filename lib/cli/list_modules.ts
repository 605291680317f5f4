/**
 * `gatehouse list-modules`: the registered modules, standard ones first, then those of plugin
 * packages, Caddy's format: `<id> [<version>] [<package>]`, then a count per group. Config
 * adapters are listed as `caddy.adapters.<name>`.
 *
 * @module
 */
import "../server/standard.ts";
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { listModules, type ModuleOrigin, moduleOrigin } from "../server/module/mod.ts";
import { getAdapter, listAdapters } from "../server/adapter.ts";
import { adapterOrigin } from "../server/plugin.ts";
import { gatehousePackage } from "./plugins.ts";

/** One line of the listing: a module id and where it comes from. */
interface Listed {
  id: string;
  origin: ModuleOrigin;
  standard: boolean;
}

/** Every registered module and adapter with its origin, sorted by id. */
function inventory(): Listed[] {
  const std = gatehousePackage();
  const all: Listed[] = listModules().map((id) => {
    const origin = moduleOrigin(id);
    return { id, origin: origin ?? std, standard: !origin };
  });
  for (const name of listAdapters()) {
    if (getAdapter(name)?.name !== name) continue; // an alias
    const origin = adapterOrigin(name);
    all.push({ id: `caddy.adapters.${name}`, origin: origin ?? std, standard: !origin });
  }
  return all.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** `list-modules`. */
export const listModulesCommand: Command = {
  name: "list-modules",
  usage: "[--packages] [--versions] [--skip-standard]",
  short: "Lists the installed modules",
  long: [
    "Lists the registered modules: the standard ones (shipped in the gatehouse package), then",
    "those of plugin packages (see add-package), with a count after each group. --versions adds",
    "each module's package version, --packages its package (npm:<name> or jsr:<name>).",
  ].join("\n"),
  flags: [
    { name: "packages", type: "boolean", help: "Print the package of each module" },
    { name: "versions", type: "boolean", help: "Print the version of each module" },
    { name: "skip-standard", short: "s", type: "boolean", help: "Skip the standard modules" },
  ],
  run({ flags }) {
    const line = (m: Listed) => {
      const parts = [m.id];
      if (flags.versions && m.origin.version) parts.push(`v${m.origin.version}`);
      if (flags.packages) parts.push(m.origin.package);
      return parts.join(" ");
    };
    const all = inventory();
    const standard = all.filter((m) => m.standard);
    const others = all.filter((m) => !m.standard);
    const out: string[] = [];
    if (!flags["skip-standard"]) {
      out.push(...standard.map(line), "", `  Standard modules: ${standard.length}`);
    }
    if (others.length) {
      if (!flags["skip-standard"]) out.push("");
      out.push(...others.map(line));
    }
    out.push("", `  Non-standard modules: ${others.length}`);
    console.log(out.join("\n"));
    return Promise.resolve(ExitCode.Success);
  },
};
