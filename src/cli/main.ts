import { Command } from 'commander';
import { VERSION } from '../version.js';
import { registerServeCommand } from './serve.js';

const program = new Command()
  .name('netwarden')
  .description('Self-hosted network scanning service')
  .version(VERSION)
  .showHelpAfterError();

registerServeCommand(program);

await program.parseAsync(process.argv);
