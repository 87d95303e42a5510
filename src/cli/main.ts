import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { registerAgentCommand } from './agent.js';
import { registerBackupCommands } from './backup.js';
import { EXIT_USAGE } from './common.js';
import { registerCompareCommand } from './compare.js';
import { registerCveCommand } from './cve.js';
import { registerDbCommands } from './db.js';
import { registerDevicesCommand } from './devices.js';
import { registerExportCommand } from './export.js';
import { registerImportCommand } from './import.js';
import { registerIntelCommand } from './intel.js';
import { registerKeyCommands } from './keys.js';
import { registerScanCommand } from './scan.js';
import { registerScheduleCommands } from './schedule.js';
import { registerServeCommand } from './serve.js';
import { registerUserCommands } from './user.js';
import { registerWatchCommand } from './watch.js';
import { registerWorkerCommand } from './worker.js';

const program = new Command()
  .name('netwarden')
  .description('Self-hosted network scanning service')
  .version(VERSION)
  .showHelpAfterError()
  // Set before the commands are added so they inherit it: usage errors exit with status 2.
  .exitOverride();

registerServeCommand(program);
registerWorkerCommand(program);
registerAgentCommand(program);
registerUserCommands(program);
registerKeyCommands(program);
registerDbCommands(program);
registerCveCommand(program);
registerIntelCommand(program);
registerScanCommand(program);
registerImportCommand(program);
registerCompareCommand(program);
registerDevicesCommand(program);
registerBackupCommands(program);
registerExportCommand(program);
registerScheduleCommands(program);
registerWatchCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // Commander has already printed its message (or the help / version text).
  if (!(err instanceof CommanderError)) throw err;
  process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
}
