import './module-paths';
// Only the configuration module, not `@openbot/platform` (whose index loads the whole server): a bad
// setting is reported and the process exits before anything else is loaded (decision 064).
import { ConfigError, parseConfig, type Config } from '../../../libs/platform/src/config/config';

const USAGE = `Usage: openbot <command>

Commands:
  start     apply pending migrations, then serve (what npm start runs)
  serve     serve the API; never changes the schema (waits on /readyz until migrated)
  migrate   apply pending migrations and exit (holds an advisory lock)
  rekey     seal every record again under OPENBOT_MASTER_KEY and rebuild memory word indexes,
            batch by batch (resumable, safe to run again); says when an old key may be dropped
`;

const COMMANDS = ['start', 'serve', 'migrate', 'rekey'] as const;
type Command = (typeof COMMANDS)[number];
const isCommand = (value: string | undefined): value is Command => (COMMANDS as readonly (string | undefined)[]).includes(value);

async function main(argv: readonly string[]): Promise<number> {
  const command = argv[0];
  if (!isCommand(command)) {
    process.stdout.write(USAGE);
    return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
  let config: Config;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`openbot: invalid configuration: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const { runCommand } = await import('./run-command.js');
  return runCommand(command, config);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`openbot: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
