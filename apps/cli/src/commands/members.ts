import { unwrap, type Schemas } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

type Member = Schemas['MemberBody'];
type Role = Schemas['AddMemberRequest']['role'];

const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];
const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);
const role = (value: string): Role => {
  if (!isRole(value)) throw new UsageError(`the role must be one of ${ROLES.join(', ')}`);
  return value;
};

const COLUMNS: ReadonlyArray<Column<Member>> = [
  ['id', (m) => m.id],
  ['role', (m) => m.role],
  ['name', (m) => m.name],
  ['email', (m) => m.email],
  ['created', (m) => m.createdAt],
];

const describe = (m: Member): string => formatFields([['id', m.id], ['role', m.role], ['name', m.name], ['email', m.email], ['created', m.createdAt]]);

export function membersCommand(program: Command, context: Context): void {
  const members = program.command('members').description('members of your organization and their roles (owner, admin, member, viewer)');

  pageOptions(members.command('list').description('list the members, oldest first')).action(async (options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap(client.GET('/v1/members', { params: { query: pageQuery(options) } }));
    printPage(context, page, COLUMNS, options, 'members list');
  });

  members
    .command('add <role>')
    .description(`add a member with a role (${ROLES.join(', ')}) and a first API key (the secret is shown once); only an owner adds an owner`)
    .option('--name <name>', 'a name to tell the member by')
    .option('--json', 'print the result as JSON')
    .action(async (wanted: string, options: { name?: string; json?: boolean }) => {
      const body = { role: role(wanted), ...(options.name !== undefined ? { name: options.name } : {}) };
      const client = await connect(context);
      const added = await unwrap(client.POST('/v1/members', { body }));
      if (options.json) return context.io.out(formatJson(added));
      context.io.out(formatFields([['id', added.member.id], ['role', added.member.role], ['name', added.member.name], ['api key', added.apiKey.id], ['secret', added.apiKey.secret]]));
      context.io.err('The secret is shown once: hand it to the member (`openbot config set --api-key <secret>`).\n');
    });

  members
    .command('role <id> <role>')
    .description("change a member's role (next request on); only an owner changes or makes an owner; the last owner stays")
    .option('--json', 'print the result as JSON')
    .action(async (id: string, wanted: string, options: { json?: boolean }) => {
      const body = { role: role(wanted) };
      const client = await connect(context);
      const member = await unwrap(client.PATCH('/v1/members/{id}', { params: { path: { id } }, body }));
      context.io.out(options.json ? formatJson(member) : describe(member));
    });

  members
    .command('remove <id>')
    .description('remove a member: its keys and sessions stop working at once; the last owner stays')
    .option('--json', 'print the member as it was as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const client = await connect(context);
      const member = await unwrap(client.DELETE('/v1/members/{id}', { params: { path: { id } } }));
      context.io.out(options.json ? formatJson(member) : `removed ${member.id}\n`);
    });
}
