/**
 * Every command of `gatehouse`, in the order help lists them. A new command is one file under
 * `lib/cli/` plus one line here.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { adaptCommand } from "./adapt.ts";
import { buildInfoCommand } from "./build_info.ts";
import { completionCommand } from "./completion.ts";
import { environCommand } from "./environ.ts";
import { fileServerCommand, fileServerExportTemplateCommand } from "./file_server.ts";
import { hashPasswordCommand } from "./hash_password.ts";
import { helpCommand } from "./help.ts";
import { listModulesCommand } from "./list_modules.ts";
import { manpageCommand } from "./manpage.ts";
import { migrateDbCommand } from "./migrate_db.ts";
import { reloadCommand } from "./reload.ts";
import { respondCommand } from "./respond.ts";
import { reverseProxyCommand } from "./reverse_proxy.ts";
import { runCommand } from "./run.ts";
import { setupDbCommand } from "./setup_db.ts";
import { startCommand } from "./start.ts";
import { trustCommand } from "./trust.ts";
import { untrustCommand } from "./untrust.ts";
import { stopCommand } from "./stop.ts";
import { storageExportCommand, storageImportCommand } from "./storage.ts";
import { validateCommand } from "./validate.ts";
import { versionCommand } from "./version.ts";

/** All declared commands. */
export const commands: Command[] = [
  adaptCommand,
  buildInfoCommand,
  completionCommand,
  environCommand,
  fileServerCommand,
  fileServerExportTemplateCommand,
  hashPasswordCommand,
  helpCommand,
  listModulesCommand,
  manpageCommand,
  migrateDbCommand,
  reloadCommand,
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
  validateCommand,
  versionCommand,
];

/** Finds a command by name (`storage export` style names included). */
export function findCommand(name: string): Command | undefined {
  return commands.find((c) => c.name === name);
}
