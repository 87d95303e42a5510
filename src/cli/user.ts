import type { Command } from 'commander';
import { hashPassword, passwordProblem, usernameProblem } from '../auth/passwords.js';
import { CLI_ACTOR, CliError, action, readNewPassword, usageError, withStore, type PasswordOptions } from './common.js';

const PASSWORD_HELP = `
The password is read from one line of standard input with --password-stdin, else from the
NETWARDEN_PASSWORD environment variable, else prompted for (hidden, twice) in a terminal.
Passwords need at least 10 characters and must not equal the username.`;

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('Manage user accounts directly in the datastore');

  user
    .command('create')
    .description('Create a user who can log in to the web interface and the API')
    .argument('<username>', '3-64 characters of A-Z, a-z, 0-9, dot, underscore or hyphen')
    .option('--password-stdin', 'read the password from the first line of standard input')
    .addHelpText('after', PASSWORD_HELP)
    .action(
      action(async (username: string, options: PasswordOptions) => {
        const nameProblem = usernameProblem(username);
        if (nameProblem) throw usageError(`username: ${nameProblem}`);
        await withStore(async (store) => {
          // Checked before asking for a password, so a typo does not cost a prompt.
          if (await store.users.findByUsername(username)) throw new CliError(`a user named '${username}' already exists`);
          const password = await readNewPassword(options);
          const problem = passwordProblem(password, username);
          if (problem) throw usageError(`password: ${problem}`);
          const passwordHash = await hashPassword(password);
          if (await store.users.findByUsername(username)) throw new CliError(`a user named '${username}' already exists`);
          const created = await store.users.create(username, passwordHash);
          await store.audit.write({
            action: 'user_created',
            ...CLI_ACTOR,
            resourceType: 'user',
            resourceId: created.id,
            details: { username },
            success: true,
          });
          process.stdout.write(`Created user '${username}' (id ${created.id}).\n`);
        });
      }),
    );

  user
    .command('reset-password')
    .description("Set a user's password and end all of that user's sessions")
    .argument('<username>', 'the user whose password is reset')
    .option('--password-stdin', 'read the new password from the first line of standard input')
    .addHelpText('after', PASSWORD_HELP)
    .action(
      action(async (username: string, options: PasswordOptions) => {
        await withStore(async (store) => {
          // Checked before asking for a password, so a typo does not cost a prompt.
          const existing = await store.users.findByUsername(username);
          if (!existing) throw new CliError(`no user named '${username}'`);
          const password = await readNewPassword(options);
          const problem = passwordProblem(password, existing.username);
          if (problem) throw usageError(`password: ${problem}`);
          await store.users.setPassword(existing.id, await hashPassword(password));
          const ended = await store.sessions.deleteForUser(existing.id, null);
          await store.audit.write({
            action: 'password_reset',
            ...CLI_ACTOR,
            resourceType: 'user',
            resourceId: existing.id,
            details: { username: existing.username, sessions_ended: ended },
            success: true,
          });
          process.stdout.write(`Password of '${existing.username}' reset; ${ended} session${ended === 1 ? '' : 's'} ended.\n`);
        });
      }),
    );
}
