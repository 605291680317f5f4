/**
 * Every command of `gatehouse`, in the order help lists them. A new command is one file under
 * `lib/cli/` plus one line here.
 *
 * @module
 */
import type { Command, CommandGroup } from "./command.ts";
import { adaptCommand } from "./adapt.ts";
import { addPackageCommand } from "./add_package.ts";
import { buildInfoCommand } from "./build_info.ts";
import { completionCommand } from "./completion.ts";
import { environCommand } from "./environ.ts";
import { fileServerCommand, fileServerExportTemplateCommand } from "./file_server.ts";
import { fmtCommand } from "./fmt.ts";
import { hashPasswordCommand } from "./hash_password.ts";
import { groupCommand, helpCommand } from "./help.ts";
import { installCommand } from "./install.ts";
import { listModulesCommand } from "./list_modules.ts";
import { manpageCommand } from "./manpage.ts";
import { migrateDbCommand } from "./migrate_db.ts";
import { reloadCommand } from "./reload.ts";
import { removePackageCommand } from "./remove_package.ts";
import { respondCommand } from "./respond.ts";
import { reverseProxyCommand } from "./reverse_proxy.ts";
import { runCommand } from "./run.ts";
import { setupDbCommand } from "./setup_db.ts";
import { startCommand } from "./start.ts";
import { trustCommand } from "./trust.ts";
import { untrustCommand } from "./untrust.ts";
import { stopCommand } from "./stop.ts";
import { storageExportCommand, storageGroup, storageImportCommand } from "./storage.ts";
import { upgradeCommand } from "./upgrade.ts";
import { validateCommand } from "./validate.ts";
import { versionCommand } from "./version.ts";

/** All declared commands. */
export const commands: Command[] = [
  adaptCommand,
  addPackageCommand,
  buildInfoCommand,
  completionCommand,
  environCommand,
  fileServerCommand,
  fileServerExportTemplateCommand,
  fmtCommand,
  hashPasswordCommand,
  helpCommand,
  installCommand,
  listModulesCommand,
  manpageCommand,
  migrateDbCommand,
  reloadCommand,
  removePackageCommand,
  respondCommand,
  reverseProxyCommand,
  runCommand,
  setupDbCommand,
  startCommand,
  stopCommand,
  storageExportCommand,
  storageImportCommand,
  trustCommand,
  untrustCommand,
  upgradeCommand,
  validateCommand,
  versionCommand,
];

/**
 * Help lines of the groups whose first word is no command of its own (`storage`); a group
 * missing here still answers, with its subcommands' names as its line.
 */
export const groups: CommandGroup[] = [storageGroup];

/** The subcommands of `name`: the commands named `<name> <word>`, in registry order. */
export function subcommandsOf(name: string): Command[] {
  const prefix = `${name} `;
  return commands.filter((c) =>
    c.name.startsWith(prefix) && !c.name.slice(prefix.length).includes(" ")
  );
}

/**
 * Finds a command by name (`storage export` style names included); the first word of
 * subcommands that is no command itself (`storage`) finds its group's command, which lists them.
 */
export function findCommand(name: string): Command | undefined {
  const command = commands.find((c) => c.name === name);
  if (command) return command;
  const subcommands = subcommandsOf(name);
  if (subcommands.length === 0) return undefined;
  return groupCommand(name, subcommands, groups.find((g) => g.name === name));
}
