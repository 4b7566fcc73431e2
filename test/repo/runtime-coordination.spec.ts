import ts from 'typescript';
import { productSources, type Finding } from './source-rules';

/**
 * REL-02: no global sweeps, Chat-runner heartbeats, process-wide gates or signal buses, and no
 * per-member runtime maps; all coordination goes through executions. Read on the syntax tree of
 * libs/features and libs/platform, the code that runs the product's work:
 * - a module-level Map or Set (or WeakMap, WeakSet) that the file writes to: a process-wide registry;
 * - a class field holding a Map or Set: an injectable is one per node, so its map is node-wide state;
 * - an event bus: an EventEmitter (node:events, @nestjs/event-emitter), Nest CQRS's EventBus or
 *   event handlers, an rxjs Subject;
 * - a `setInterval`: a periodic sweep.
 * Each legitimate one is listed below with why it coordinates nothing: a cache or a node's own
 * sockets, bounded and rebuilt from PostgreSQL, never what another node or another piece of work
 * waits on. A new one fails here until it is judged and listed.
 */

const FOLDERS = ['libs/features/src', 'libs/platform/src'];

/** `<file>:<Class>.<field>` → why it is not coordination state. */
const ALLOWED: Record<string, string> = {
  // The node's own open MCP sessions (sockets cannot live in a database). Each is a leased row of
  // app_connection_scopes (decision 037, RES-07): who holds it, its lease and its close result are
  // read there by every other node and the cleanup; the maps only find this node's socket again.
  'libs/features/src/apps/app-sessions.ts:AppSessions.scopes': "this node's open sessions, each mirrored by a leased row",
  'libs/features/src/apps/app-sessions.ts:AppSessions.opening': 'single-flight of a session this node is opening',
  'libs/features/src/apps/app-sessions.ts:AppSessions.retiring': 'sessions of this node closed once their last use is released',
  // Made per phase run and dropped with it: not one per node.
  'libs/features/src/apps/app-sessions.ts:PhaseSessions.held': "one phase's uses of sessions, released with its resources (RES-01)",
  'libs/platform/src/turn-core/turn-tool.ts:PhaseScope.held': 'what the calls of one phase run share, dropped with the phase',
  // Registration, filled once at start-up by the modules: keyed by tool kind, never by member or Chat.
  'libs/platform/src/turn-core/turn-tool.ts:TurnTools.kinds': 'the tool kinds the modules register at start-up',
  // Caches of what PostgreSQL or the configuration says, keyed by neither member nor Chat.
  'libs/features/src/sso/relying-party.ts:RelyingParties.cached': "discovered OIDC providers by (organization, revision), reloaded after an hour",
  'libs/platform/src/sealing/sealer.ts:Sealer.opened': 'unwrapped data keys, bounded (OPENED_DEKS)',
  'libs/platform/src/metrics/openbot-metrics.ts:OpenbotMetrics.modelLabels': 'metric label values, bounded by the label limit',
  'libs/platform/src/egress/egress-policy.ts:EgressPolicy.allowedHosts': 'the operator-configured egress allow list',
  'libs/platform/src/egress/egress-client.ts:EgressClient.agents': 'HTTP connection pools per pinned host',
  // A node-local shortcut whose truth is in PostgreSQL: bounded (MAX_BLOCKED) and expiring.
  'libs/platform/src/limits/blocked-addresses.ts:BlockedAddresses.until': 'a bounded local copy of blocks counted in PostgreSQL (decision 017)',
  // This node's in-flight refresh of one grant: the cross-node lock and the refreshed token are in PostgreSQL (GRANT-07).
  'libs/features/src/app-oauth/grant-tokens.ts:GrantTokens.inFlight': "single-flight of this node's in-flight grant refreshes",
};

const COLLECTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet']);
const BUS_MODULES = new Set(['events', 'node:events', '@nestjs/event-emitter', 'eventemitter3']);
const BUS_NAMES = new Set(['EventEmitter', 'EventBus', 'EventsHandler', 'Subject', 'BehaviorSubject', 'ReplaySubject']);

function collectionOf(node: ts.Expression | undefined): string | null {
  if (node === undefined || !ts.isNewExpression(node) || !ts.isIdentifier(node.expression)) return null;
  return COLLECTIONS.has(node.expression.text) ? node.expression.text : null;
}

function typedCollection(type: ts.TypeNode | undefined): string | null {
  if (type === undefined || !ts.isTypeReferenceNode(type) || !ts.isIdentifier(type.typeName)) return null;
  return COLLECTIONS.has(type.typeName.text) ? type.typeName.text : null;
}

/** What in one source file holds or signals coordination state outside executions (see above). */
export function runtimeCoordination(file: string, text: string): Finding[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const findings: Finding[] = [];
  const at = (node: ts.Node, what: string): void => {
    findings.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, what });
  };
  // Module-level collections, and the names the file writes to with set/add/delete/clear.
  const moduleCollections = new Map<string, ts.Node>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (ts.isIdentifier(declaration.name) && (collectionOf(declaration.initializer) !== null || typedCollection(declaration.type) !== null)) {
        moduleCollections.set(declaration.name.text, declaration);
      }
    }
  }
  const written = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const target = node.expression.expression;
      if (ts.isIdentifier(target) && ['set', 'add', 'delete', 'clear'].includes(node.expression.name.text)) written.add(target.text);
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'setInterval') at(node, 'a periodic sweep (setInterval)');
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'setInterval') at(node, 'a periodic sweep (setInterval)');
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const from = node.moduleSpecifier.text;
      const named = node.importClause?.namedBindings;
      const names = named !== undefined && ts.isNamedImports(named) ? named.elements.map((e) => (e.propertyName ?? e.name).text) : [];
      if (BUS_MODULES.has(from)) at(node, `imports an event bus from ${from}`);
      else for (const name of names.filter((n) => BUS_NAMES.has(n))) at(node, `imports ${name} from ${from} (a signal bus)`);
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && BUS_NAMES.has(node.expression.text)) at(node, `makes a ${node.expression.text} (a signal bus)`);
    if (ts.isPropertyDeclaration(node) && ts.isIdentifier(node.name)) {
      const kind = collectionOf(node.initializer) ?? typedCollection(node.type);
      const owner = ts.isClassLike(node.parent) && node.parent.name !== undefined ? node.parent.name.text : '(anonymous class)';
      const key = `${file}:${owner}.${node.name.text}`;
      if (kind !== null && ALLOWED[key] === undefined) at(node, `${owner}.${node.name.text} holds a ${kind} (node-wide state of a singleton)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const [name, declaration] of moduleCollections) {
    if (written.has(name)) at(declaration, `module-level ${name} is a collection the module writes to (a process-wide registry)`);
  }
  return findings.sort((a, b) => a.line - b.line);
}

describe('runtime coordination (REL-02)', () => {
  it('[REL-02] libs/features and libs/platform hold no module-level registries, no node-wide maps in singletons, no event buses and no interval sweeps beyond the listed caches and sockets', () => {
    const sources = productSources(FOLDERS);
    expect(sources.length).toBeGreaterThan(100);
    expect(sources.flatMap(({ file, text }) => runtimeCoordination(file, text))).toEqual([]);
    // Every allowance names a field that still exists: a stale one would hide nothing and mislead.
    const present = new Set(sources.map((s) => s.file));
    for (const key of Object.keys(ALLOWED)) {
      const [file, field] = key.split(':') as [string, string];
      expect({ key, present: present.has(file) && sources.find((s) => s.file === file)!.text.includes(` ${field.split('.')[1]} = `) }).toEqual({ key, present: true });
    }
  });

  it('[REL-02] the scan flags a planted per-member map, a module-level Chat registry, an event bus between features and an interval sweep', () => {
    const planted = `import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { EventBus } from '@nestjs/cqrs';
const runningChats = new Set<string>();
export const bus = new EventEmitter();
@Injectable()
export class MemberRuntime {
  private readonly byMember = new Map<string, number>();
  private readonly typed: Map<string, string>;
  constructor(private readonly events: EventBus) { this.typed = new Map(); }
  start(chatId: string): void { runningChats.add(chatId); setInterval(() => this.byMember.clear(), 1000); }
}
const LOOKUP = new Set(['a', 'b']);
export const known = (x: string) => LOOKUP.has(x);
`;
    const found = runtimeCoordination('libs/features/src/chats/zz-probe.ts', planted).map((f) => `${f.line}: ${f.what}`);
    expect(found).toEqual([
      '2: imports an event bus from node:events',
      '3: imports EventBus from @nestjs/cqrs (a signal bus)',
      '4: module-level runningChats is a collection the module writes to (a process-wide registry)',
      '5: makes a EventEmitter (a signal bus)',
      '8: MemberRuntime.byMember holds a Map (node-wide state of a singleton)',
      '9: MemberRuntime.typed holds a Map (node-wide state of a singleton)',
      '11: a periodic sweep (setInterval)',
    ]);
    // The same field is allowed only at the place the list names.
    expect(runtimeCoordination('libs/features/src/apps/app-sessions.ts', 'export class AppSessions { private readonly scopes = new Map<string, number>(); }')).toEqual([]);
    expect(runtimeCoordination('libs/features/src/chats/app-sessions.ts', 'export class AppSessions { private readonly scopes = new Map<string, number>(); }')).toHaveLength(1);
  });
});
