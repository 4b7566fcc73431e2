import { unwrap } from '@openbot/client';
import type { Command } from 'commander';
import { configPath, readConfig, writeConfig } from '../context/config';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson } from '../context/output';

export function orgsCommand(program: Command, context: Context): void {
  const orgs = program.command('orgs').description('organizations (platform administrator)');

  orgs
    .command('create <name>')
    .description('create an organization with its owner and a first API key (the secret is shown once)')
    .option('--admin-token <token>', 'the platform administrator token (default: $OPENBOT_ADMIN_TOKEN)')
    .option('--save', 'store the new API key with `config set` so later commands use it')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, options: { adminToken?: string; save?: boolean; json?: boolean }) => {
      const token = options.adminToken ?? context.env.OPENBOT_ADMIN_TOKEN;
      if (!token) throw new UsageError('give --admin-token <token> (or set OPENBOT_ADMIN_TOKEN)');
      const client = await connect(context, { keyless: true });
      const created = await unwrap(client.POST('/v1/organizations', { body: { name }, headers: { authorization: `Bearer ${token}` } }));
      if (options.save) {
        const path = configPath(context.env);
        await writeConfig({ ...(await readConfig(path)), url: client.baseUrl, apiKey: created.apiKey.secret }, path);
      }
      if (options.json) return context.io.out(formatJson(created));
      context.io.out(
        formatFields([
          ['organization', `${created.organization.id}  ${created.organization.name}`],
          ['owner', `${created.member.id}  ${created.member.role}`],
          ['api key', created.apiKey.id],
          ['secret', created.apiKey.secret],
        ]),
      );
      context.io.err(options.save ? 'The key is saved in the CLI configuration.\n' : 'The secret is shown once: `openbot config set --api-key <secret>` to use it.\n');
    });
}
