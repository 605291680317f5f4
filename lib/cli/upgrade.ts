/**
 * `gatehouse upgrade` (experimental), and the change every package command shares:
 * `add-package` is an upgrade plus packages, `remove-package` an upgrade minus packages.
 *
 * @module
 */
import type { Command, Flags } from "./command.ts";
import { ExitCode } from "./command.ts";
import { ChangeError, changeInstallation } from "./install_change.ts";
import { describeManifest, type Installation } from "./installation.ts";
import { type PackageRequest, parsePackageRequest } from "./package_spec.ts";
import { currentInstallation } from "./plugins.ts";

/** `-k/--keep-backup` of upgrade, add-package and remove-package. */
export const KEEP_BACKUP_FLAG = {
  name: "keep-backup",
  short: "k",
  type: "boolean",
  help: "Keep the previous installation's directory (generations/<n>) after switching",
} as const;

/** What a package command asks for, in words (for the explanation outside an installation). */
function whatItDoes(command: string, packages: string[]): string {
  const extra = command === "add-package"
    ? ` plus ${packages.join(", ")}`
    : command === "remove-package"
    ? ` without ${packages.join(", ")}`
    : "";
  return [
    `From an installation, ${command} resolves the latest release of @gatehouse/gatehouse and of`,
    `each installed plugin package${extra}, installs them into a new generation beside the`,
    "active one, checks it (its list-modules must succeed and show every plugin's modules), then",
    "switches to it atomically; on any failure the active installation stays exactly as it was",
    "and the command exits 1. Servers already running are not interrupted.",
  ].join("\n");
}

/** The message and exit code of a package command run outside an installation. */
function notInstalled(command: string, packages: string[]): number {
  const main = Deno.mainModule;
  const where = Deno.build.standalone
    ? [
      `gatehouse ${command}: this gatehouse is a compiled binary; its packages were fixed when it`,
      "was compiled, so there is no installation to change in place.",
    ]
    : [
      `gatehouse ${command}: this gatehouse is not an installed one (it runs ${main}), so there`,
      "is no installation to change in place.",
    ];
  const cli = main.startsWith("file:") ? decodeURIComponent(new URL(main).pathname) : main;
  const how = Deno.build.standalone
    ? [
      "To change it, compile a new binary from an entry that imports the plugin packages (see",
      'docs/server.md, "Plugins and upgrades"), or install gatehouse with',
      "  deno run -A npm:@gatehouse/gatehouse/cli install [--root <dir>] [<packages...>]",
    ]
    : [
      "To install gatehouse (with plugin packages, if any):",
      `  deno run -A ${cli} install [--root <dir>] [<packages...>]`,
      `then run <dir>/bin/gatehouse ${command}${packages.length ? ` ${packages.join(" ")}` : ""}.`,
      "A source checkout is updated with git instead.",
    ];
  console.error([...where, "", whatItDoes(command, packages), "", ...how].join("\n"));
  return ExitCode.Failure;
}

/**
 * Replaces the installation with one whose plugin packages are `plugins(current)`, every
 * package at its latest matching release; prints what happened; resolves to the exit code.
 */
export async function runPackageChange(
  command: string,
  flags: Flags,
  args: string[],
  plugins: (current: PackageRequest[], installation: Installation) => PackageRequest[],
): Promise<number> {
  const installation = currentInstallation();
  if (!installation) return notInstalled(command, args);
  const { manifest, layout } = installation;
  const current = manifest.plugins.map((p) => parsePackageRequest(p.request));
  const wanted = plugins(current, installation);
  const say = (line: string) => console.log(line);
  try {
    const result = await changeInstallation({
      layout,
      deno: Deno.execPath(),
      gatehouse: { ...parsePackageRequest(manifest.gatehouse.package), range: "" },
      plugins: wanted,
      minimumDependencyAge: manifest.minimumDependencyAge,
      previous: installation.generation,
      keepBackup: flags["keep-backup"] === true,
      say,
    });
    say(`${command}: now ${describeManifest(result.manifest)}`);
    say(`(was ${describeManifest(manifest)})`);
    if (result.kept) say(`the previous installation is kept in ${result.kept}`);
    say(
      "servers already running keep their version until they are restarted " +
        "(gatehouse stop, then start, or your service manager)",
    );
    return ExitCode.Success;
  } catch (e) {
    const reason = e instanceof ChangeError
      ? e.message
      : `unexpected error: ${(e as Error)?.message ?? e}`;
    console.error(`gatehouse ${command}: ${reason}`);
    console.error(
      `The installation in ${layout.root} is unchanged: ${describeManifest(manifest)}.`,
    );
    return ExitCode.Failure;
  }
}

/** `upgrade`. */
export const upgradeCommand: Command = {
  name: "upgrade",
  usage: "[--keep-backup]",
  short: "Upgrades gatehouse and its plugin packages (EXPERIMENTAL)",
  long: [
    "Replaces the installation with the latest release of gatehouse and of each plugin package",
    "(within the range each was added with). The new installation is resolved, locked and",
    "checked (its list-modules must succeed and show every plugin's modules) before it replaces",
    "the old one atomically; any failure leaves the old one as it was and exits 1. Running",
    "servers are not interrupted. Works in an installed gatehouse (see `install`).",
  ].join("\n"),
  flags: [KEEP_BACKUP_FLAG],
  run({ flags, args }) {
    if (args.length) {
      console.error(`gatehouse upgrade: takes no arguments (got ${args.join(" ")})`);
      return Promise.resolve(ExitCode.Failure);
    }
    return runPackageChange("upgrade", flags, args, (current) => current);
  },
};
