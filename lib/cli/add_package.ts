/**
 * `gatehouse add-package` (experimental): an upgrade plus the listed plugin packages.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { packageId, type PackageRequest, parsePackageRequest } from "./package_spec.ts";
import { UsageError } from "./usage_error.ts";
import { KEEP_BACKUP_FLAG, runPackageChange } from "./upgrade.ts";

/** Parses package arguments; refuses gatehouse itself and a package named twice. */
export function packageArguments(command: string, args: string[]): PackageRequest[] {
  if (args.length === 0) {
    throw new UsageError(`${command}: name at least one package, e.g. gatehouse-plugin-greet`);
  }
  const requests = args.map(parsePackageRequest);
  const seen = new Set<string>();
  for (const r of requests) {
    if (r.name === "@gatehouse/gatehouse") {
      throw new UsageError(`${command}: @gatehouse/gatehouse is not a plugin package; use upgrade`);
    }
    if (seen.has(packageId(r))) throw new UsageError(`${command}: ${packageId(r)} is named twice`);
    seen.add(packageId(r));
  }
  return requests;
}

/** `add-package`. */
export const addPackageCommand: Command = {
  name: "add-package",
  usage: "<packages...> [--keep-backup]",
  short: "Adds plugin packages to the installation (EXPERIMENTAL)",
  long: [
    "Like upgrade, plus the listed packages: npm names (name, name@range, npm:name) or JSR",
    "names (jsr:@scope/name) of packages that export Gatehouse modules. A package already",
    "installed takes the new range. The new installation is checked (list-modules must show",
    "modules of every plugin package) before it replaces the old one atomically; any failure",
    "leaves the old one as it was and exits 1.",
  ].join("\n"),
  flags: [KEEP_BACKUP_FLAG],
  run({ flags, args }) {
    const added = packageArguments("add-package", args);
    return runPackageChange("add-package", flags, args, (current) => {
      const next = current.map((c) => added.find((a) => packageId(a) === packageId(c)) ?? c);
      for (const a of added) {
        if (!current.some((c) => packageId(c) === packageId(a))) next.push(a);
      }
      return next;
    });
  },
};
