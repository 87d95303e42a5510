import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { EXIT_USAGE } from './common.js';

type Register = (program: Command) => void;

/**
 * The commands, each loaded only when it is run: a command's module brings its part of the
 * service (the store, the engines, the HTTP client), and loading all of them cost every run of
 * the program about a second of start-up. Help and an unknown command load them all.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Register>>> = {
  serve: async () => (await import('./serve.js')).registerServeCommand,
  worker: async () => (await import('./worker.js')).registerWorkerCommand,
  agent: async () => (await import('./agent.js')).registerAgentCommand,
  user: async () => (await import('./user.js')).registerUserCommands,
  keys: async () => (await import('./keys.js')).registerKeyCommands,
  db: async () => (await import('./db.js')).registerDbCommands,
  cve: async () => (await import('./cve.js')).registerCveCommand,
  intel: async () => (await import('./intel.js')).registerIntelCommand,
  scan: async () => (await import('./scan.js')).registerScanCommand,
  import: async () => (await import('./import.js')).registerImportCommand,
  compare: async () => (await import('./compare.js')).registerCompareCommand,
  devices: async () => (await import('./devices.js')).registerDevicesCommand,
  // One module registers both.
  backup: async () => (await import('./backup.js')).registerBackupCommands,
  restore: async () => (await import('./backup.js')).registerBackupCommands,
  export: async () => (await import('./export.js')).registerExportCommand,
  schedule: async () => (await import('./schedule.js')).registerScheduleCommands,
  watch: async () => (await import('./watch.js')).registerWatchCommand,
};

const program = new Command()
  .name('netwarden')
  .description('Self-hosted network scanning service')
  .version(VERSION)
  .showHelpAfterError()
  // Set before the commands are added so they inherit it: usage errors exit with status 2.
  .exitOverride();

const named = process.argv[2];
const wanted = named !== undefined && Object.hasOwn(COMMANDS, named) ? [COMMANDS[named]] : Object.values(COMMANDS);
// In the table's order, as `--help` lists them; a module that registers two commands, once.
const registers = new Set(await Promise.all(wanted.map((load) => load())));
for (const register of registers) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // Commander has already printed its message (or the help / version text).
  if (!(err instanceof CommanderError)) throw err;
  process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
}
