import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * Architecture rules that import edges cannot express, checked on the TypeScript syntax tree of
 * the product sources (test/repo/architecture-rules.spec.ts). Each check takes a file's path and
 * text, so a spec can prove it flags a violation without writing one into the tree.
 */

export const root = join(__dirname, '..', '..');

export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

/**
 * Probe files repository specs write into the tree for a moment, to prove a rule fires
 * (`zz-probe-<pid>.ts`, `zz-boundary-probe-<pid>.ts`, `zz-probe-nest-<pid>.ts`, …). Specs run in
 * parallel, so every scan of the tree skips them: another spec's probe is not product code.
 */
export const PROBE_FILE = /zz-[a-z-]*probe-[a-z0-9.-]+\.ts$/;

/** Every product source file (no specs, no generated client, no probe of another spec) under the given repository folders. */
export function productSources(folders: readonly string[]): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts') && !PROBE_FILE.test(entry.name)) {
        out.push({ file: relative(root, path), text: readFileSync(path, 'utf8') });
      }
    }
  };
  for (const folder of folders) if (existsSync(join(root, folder))) walk(join(root, folder));
  return out;
}

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

function at(source: ts.SourceFile, node: ts.Node, what: string): Finding {
  return { file: source.fileName, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, what };
}

function visit(node: ts.Node, each: (node: ts.Node) => void): void {
  each(node);
  ts.forEachChild(node, (child) => visit(child, each));
}

/** Nest's HTTP vocabulary: the HttpException family and the status helpers. */
const HTTP_NAMES = /(Exception|ExceptionFilter)$|^(HttpStatus|HttpCode|Catch|Res|Response|Redirect|Header)$/;
const HTTP_PACKAGES = new Set(['@nestjs/common', '@nestjs/core', '@nestjs/platform-fastify', 'fastify', '@fastify/cookie', '@fastify/static']);

function isStatusCode(node: ts.Node): boolean {
  return ts.isNumericLiteral(node) && Number(node.text) >= 100 && Number(node.text) <= 599 && Number.isInteger(Number(node.text));
}

/**
 * ARCH-03: knowledge of HTTP outside libs/api. Flags an import of Nest's HTTP exceptions or
 * status helpers (or of the HTTP server packages), and a `throw` that carries a status code: a
 * `status`/`statusCode` property, or a 1xx–5xx number given to the thrown error.
 */
export function httpKnowledge(file: string, text: string): Finding[] {
  const source = parse(file, text);
  const findings: Finding[] = [];
  visit(source, (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const from = node.moduleSpecifier.text;
      if (!HTTP_PACKAGES.has(from)) return;
      const named = node.importClause?.namedBindings;
      if (from.startsWith('@nestjs/common') || from === '@nestjs/core') {
        if (named && ts.isNamedImports(named)) {
          for (const element of named.elements) {
            const name = (element.propertyName ?? element.name).text;
            if (HTTP_NAMES.test(name)) findings.push(at(source, element, `imports ${name} from ${from}`));
          }
        }
      } else if (node.importClause?.isTypeOnly !== true) {
        findings.push(at(source, node, `imports the HTTP server package ${from}`));
      }
    }
    if (ts.isThrowStatement(node)) {
      visit(node.expression, (inner) => {
        if (ts.isPropertyAssignment(inner) || ts.isShorthandPropertyAssignment(inner)) {
          const name = inner.name.getText(source);
          if (name === 'status' || name === 'statusCode') findings.push(at(source, inner, `throws an error with a ${name}`));
        }
        if ((ts.isNewExpression(inner) || ts.isCallExpression(inner)) && (inner.arguments ?? []).some(isStatusCode)) {
          findings.push(at(source, inner, `throws an error built with an HTTP status code`));
        }
      });
    }
  });
  return findings;
}

const SERVICE_DECORATORS = new Set(['Injectable', 'CommandHandler', 'QueryHandler', 'EventsHandler']);
/** Nest's lifecycle hooks: a class with only these wires a resource's life to the app's, it serves no caller. */
const LIFECYCLE_HOOKS = new Set(['onModuleInit', 'onApplicationBootstrap', 'onModuleDestroy', 'beforeApplicationShutdown', 'onApplicationShutdown']);

function decoratorName(decorator: ts.Decorator): string | null {
  const call = decorator.expression;
  const callee = ts.isCallExpression(call) ? call.expression : call;
  return ts.isIdentifier(callee) ? callee.text : null;
}

function unwrap(expression: ts.Expression): ts.Expression {
  let e = expression;
  for (;;) {
    if (ts.isAwaitExpression(e) || ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e) || ts.isSatisfiesExpression(e)) {
      e = e.expression;
    } else return e;
  }
}

/** `this.<dep>` at the root of a property chain, e.g. `this.engine.signal` → `engine`. */
function injectedRoot(callee: ts.Expression, injected: ReadonlySet<string>): string | null {
  let e = callee;
  while (ts.isPropertyAccessExpression(e) && !(e.expression.kind === ts.SyntaxKind.ThisKeyword)) e = e.expression;
  if (ts.isPropertyAccessExpression(e) && e.expression.kind === ts.SyntaxKind.ThisKeyword && injected.has(e.name.text)) return e.name.text;
  return null;
}

/** An argument that only passes on what the method received: a parameter, a field of one, or a spread of one. */
function passesOn(argument: ts.Expression, parameters: ReadonlySet<string>): boolean {
  const e = ts.isSpreadElement(argument) ? argument.expression : argument;
  let rootOf: ts.Expression = e;
  while (ts.isPropertyAccessExpression(rootOf)) rootOf = rootOf.expression;
  return ts.isIdentifier(rootOf) && parameters.has(rootOf.text);
}

/** The dependency a method forwards to (its whole body is one call of it, with its own arguments), or null. */
function forwardsTo(method: ts.MethodDeclaration, injected: ReadonlySet<string>): string | null {
  const body = method.body;
  if (body === undefined || body.statements.length !== 1) return null;
  const statement = body.statements[0]!;
  const expression = ts.isReturnStatement(statement) ? statement.expression : ts.isExpressionStatement(statement) ? statement.expression : undefined;
  if (expression === undefined) return null;
  const call = unwrap(expression);
  if (!ts.isCallExpression(call)) return null;
  const parameters = new Set(method.parameters.flatMap((p) => (ts.isIdentifier(p.name) ? [p.name.text] : [])));
  if (!call.arguments.every((a) => passesOn(a, parameters))) return null;
  return injectedRoot(call.expression, injected);
}

/**
 * ARCH-05: a service that only forwards. Flags an injectable class (or CQRS handler) with at
 * least one method, every one of which is a single call of one injected dependency, passing on
 * its own arguments: the caller could use that dependency (the plain query or rule) directly.
 */
export function forwardingServices(file: string, text: string): Finding[] {
  const source = parse(file, text);
  const findings: Finding[] = [];
  visit(source, (node) => {
    if (!ts.isClassDeclaration(node) || node.name === undefined) return;
    const decorators = ts.getDecorators(node) ?? [];
    if (!decorators.some((d) => SERVICE_DECORATORS.has(decoratorName(d) ?? ''))) return;
    const constructor = node.members.find(ts.isConstructorDeclaration);
    const injected = new Set(
      (constructor?.parameters ?? []).flatMap((p) =>
        ts.isIdentifier(p.name) && (ts.getModifiers(p) ?? []).some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ReadonlyKeyword || m.kind === ts.SyntaxKind.PublicKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword)
          ? [p.name.text]
          : [],
      ),
    );
    const methods = node.members.filter(ts.isMethodDeclaration).filter((m) => !LIFECYCLE_HOOKS.has(m.name.getText(source)));
    if (methods.length === 0 || injected.size === 0) return;
    const targets = methods.map((m) => forwardsTo(m, injected));
    if (targets.every((t) => t !== null)) {
      findings.push(at(source, node.name, `${node.name.text} only forwards to ${[...new Set(targets)].map((t) => `this.${t}`).join(', ')}`));
    }
  });
  return findings;
}

/** SQL that reads or writes a table of the engine by name. */
const ENGINE_TABLE_SQL = /\b(from|join|update|into)\s+(executions|execution_signals|execution_timers|execution_calls|execution_events|execution_commands|child_notices)\b/i;

/**
 * Feature SQL that names the engine's own tables (issue 12): features read execution state
 * through the engine's read API (`executionReads`), so the engine can change its tables.
 */
export function engineTableSql(file: string, text: string): Finding[] {
  const source = parse(file, text);
  const findings: Finding[] = [];
  visit(source, (node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      const match = ENGINE_TABLE_SQL.exec(node.text);
      if (match) findings.push(at(source, node, `SQL names the engine's table: "${match[0]}"`));
    }
  });
  return findings;
}

/** The engine's helpers that check a connection out of a raw pg pool. */
const POOL_HELPERS = new Set(['withTransaction', 'withConnection']);

/**
 * A raw pg pool in feature code: reaching through `Database` to its `.pool`, a statement or a
 * checkout on something named `pool` (`pool.query`, `pool.connect`), or the engine's pool helpers
 * (`withTransaction`, `withConnection`). Feature code asks the injected Database/Sql instead:
 * `rows`/`one`/`count` for statements, `transaction` when it writes more than one.
 */
export function rawPoolUse(file: string, text: string): Finding[] {
  const source = parse(file, text);
  const found: Finding[] = [];
  visit(source, (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && (node.moduleSpecifier.text === '@openbot/engine' || node.moduleSpecifier.text === '@openbot/engine/node')) {
      const bindings = node.importClause?.namedBindings;
      if (bindings !== undefined && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) {
          const name = (element.propertyName ?? element.name).text;
          if (POOL_HELPERS.has(name)) found.push(at(source, element, `imports ${name} from ${node.moduleSpecifier.text}`));
        }
      }
    }
    if (!ts.isPropertyAccessExpression(node)) return;
    if (node.name.text === 'pool') found.push(at(source, node, `reaches the raw pool: ${node.getText(source)}`));
    else if ((node.name.text === 'query' || node.name.text === 'connect') && ts.isIdentifier(node.expression) && node.expression.text === 'pool') {
      found.push(at(source, node, `calls ${node.getText(source)} on a raw pool`));
    }
  });
  return found;
}
