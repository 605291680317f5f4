/**
 * `gatehouse remove-package` (experimental): an upgrade minus the listed plugin packages.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { packageId } from "./package_spec.ts";
import { packageArguments } from "./add_package.ts";
import { UsageError } from "./usage_error.ts";
import { KEEP_BACKUP_FLAG, runPackageChange } from "./upgrade.ts";

/** `remove-package`. */
export const removePackageCommand: Command = {
  name: "remove-package",
  usage: "<packages...> [--keep-backup]",
  short: "Removes plugin packages from the installation (EXPERIMENTAL)",
  long: [
    "Like upgrade, minus the listed plugin packages (by name: name, npm:name, jsr:@scope/name).",
    "The new installation is checked before it replaces the old one atomically; any failure",
    "leaves the old one as it was and exits 1.",
  ].join("\n"),
  flags: [KEEP_BACKUP_FLAG],
  run({ flags, args }) {
    const removed = packageArguments("remove-package", args);
    for (const r of removed) {
      if (r.range) {
        throw new UsageError(
          `remove-package: name the package without a version (${packageId(r)})`,
        );
      }
    }
    return runPackageChange("remove-package", flags, args, (current) => {
      const missing = removed.filter((r) => !current.some((c) => packageId(c) === packageId(r)));
      if (missing.length) {
        const installed = current.map(packageId).join(", ") || "none";
        throw new UsageError(
          `remove-package: ${missing.map(packageId).join(", ")} ` +
            `${missing.length > 1 ? "are" : "is"} not installed (plugin packages: ${installed})`,
        );
      }
      return current.filter((c) => !removed.some((r) => packageId(r) === packageId(c)));
    });
  },
};
