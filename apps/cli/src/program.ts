import { Command, CommanderError } from 'commander';
import { billingCommands } from './commands/billing';
import { botsCommand } from './commands/bots';
import { chatCommand } from './commands/chat';
import { chatsCommand } from './commands/chats';
import { configCommand } from './commands/config';
import { executionsCommand } from './commands/executions';
import { approvalsCommand } from './commands/approvals';
import { memoriesCommand } from './commands/memories';
import { filesCommand } from './commands/files';
import { appsCommand } from './commands/apps';
import { keysCommand } from './commands/keys';
import { limitsCommand } from './commands/limits';
import { membersCommand } from './commands/members';
import { orgsCommand } from './commands/orgs';
import { adminCommand } from './commands/admin';
import { providersCommand } from './commands/providers';
import { vaultsCommand } from './commands/vaults';
import { CLI_VERSION, type Context } from './context/context';
import { EXIT, describeFailure } from './context/exit-codes';

const HELP_FOOTER = `
Configuration: \`openbot config set --url <url> --api-key <key>\` writes $OPENBOT_CONFIG
(default ~/.config/openbot/config.json, mode 0600); OPENBOT_URL and OPENBOT_API_KEY override it.

Exit codes: 0 ok, 1 usage error, 2 the API refused the request (4xx),
3 the server failed (5xx) or is unreachable, 4 the execution ended but did not complete.`;

export function buildProgram(context: Context): Command {
  const program = new Command('openbot')
    .description('Command line client of the OpenBot API')
    .version(CLI_VERSION)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.io.out(text),
      writeErr: (text) => context.io.err(text),
      // Commander's own complaints in the CLI's error format: `Error: Usage: …`.
      outputError: (text, write) => write(text.replace(/^error: /, 'Error: Usage: ')),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', HELP_FOOTER);
  configCommand(program, context);
  orgsCommand(program, context);
  adminCommand(program, context);
  membersCommand(program, context);
  keysCommand(program, context);
  limitsCommand(program, context);
  providersCommand(program, context);
  botsCommand(program, context);
  chatsCommand(program, context);
  chatCommand(program, context);
  executionsCommand(program, context);
  approvalsCommand(program, context);
  memoriesCommand(program, context);
  filesCommand(program, context);
  appsCommand(program, context);
  billingCommands(program, context);
  vaultsCommand(program, context);
  return program;
}

/** Runs one command line and answers the exit code; errors are printed as `Error: <type>: <message>`. */
export async function run(argv: readonly string[], context: Context): Promise<number> {
  const program = buildProgram(context);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    // Commander already printed its message (or the help / the version, which exit 0).
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const { code, lines } = describeFailure(error);
    context.io.err(lines.map((line) => `${line}\n`).join(''));
    return code;
  }
}
