import { rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { cruise } from './cruise';
import { productSources, root } from './source-rules';

/**
 * One tool-call path (decision 078): ToolCalls (libs/platform/src/tool-calls/tool-calls.ts) is the
 * only code that answers a tool call. Three checks fail on a second path: a scan for call-log
 * entries of kind `tool` anywhere else, the dependency rule that keeps every tool kind reachable
 * only from its feature's module (where it registers with TurnTools), and the rule that keeps the
 * Turn core and ToolCalls free of features.
 */

/** The only file that may write a call-log entry of kind `tool`. */
const TOOL_CALL_PATH = new Set(['libs/platform/src/tool-calls/tool-calls.ts']);

/** Calls in one file that pass an options object with `kind: 'tool'`: a tool call logged by hand. */
function toolCallEntries(file: string, text: string): number[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      for (const argument of node.arguments) {
        if (!ts.isObjectLiteralExpression(argument)) continue;
        const tool = argument.properties.some(
          (p) => ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === 'kind' && ts.isStringLiteralLike(p.initializer) && p.initializer.text === 'tool',
        );
        if (tool) lines.push(source.getLineAndCharacterOfPosition(node.getStart()).line + 1);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

describe('one tool-call path', () => {
  const probe = join(root, 'libs', 'features', 'src', 'chats', 'turn', `zz-tool-path-probe-${process.pid}.ts`);
  const coreProbe = join(root, 'libs', 'platform', 'src', 'turn-core', `zz-core-path-probe-${process.pid}.ts`);

  afterAll(async () => {
    await rm(probe, { force: true });
    await rm(coreProbe, { force: true });
  });

  it('nothing in libs or apps but ToolCalls logs a call of kind tool', () => {
    const files = productSources(['libs', 'apps']);
    expect(files.length).toBeGreaterThan(100);
    const offenders: string[] = [];
    let own = 0;
    for (const { file, text } of files) {
      const lines = toolCallEntries(file, text);
      if (TOOL_CALL_PATH.has(file)) own += lines.length;
      else for (const line of lines) offenders.push(`${file}:${line}`);
    }
    // The scan knows what it looks for: ToolCalls' own entries (a View's send, a Turn's call).
    expect(own).toBe(2);
    expect(offenders).toEqual([]);
  });

  it('the scan catches a workflow that answers a tool call under the call log itself', () => {
    const file = join(root, 'libs', 'features', 'src', 'apps', 'view-call.workflow.ts');
    expect(toolCallEntries(file, "await context.call('tool', { safe: true, kind: 'tool' }, (request) => send(request));")).toEqual([1]);
    expect(toolCallEntries(file, "const x = 1;\nawait context.call(`tool:${id}`, { 'kind': 'tool', safe: false }, send);")).toEqual([2]);
    expect(toolCallEntries(file, "await context.call('model', { safe: true, kind: 'model' }, send);")).toEqual([]);
  });

  it('the dependency rule refuses a tool kind imported anywhere but its feature module', async () => {
    await writeFile(probe, "import { appTool } from '../../apps/app-tool';\nexport const probe = appTool;\n");
    // Only the probe and what it imports: other specs write and remove probes of their own meanwhile.
    const { code, output } = await cruise([relative(root, probe)]);
    expect(code).not.toBe(0);
    expect(output).toMatch(/tool-kinds-only-from-their-module/);
    expect(output).toMatch(/zz-tool-path-probe/);
    await rm(probe, { force: true });
  });

  it('the dependency rule refuses a feature import from the Turn core', async () => {
    await writeFile(coreProbe, "import { BOT_VIEW_COLUMNS } from '../../../features/src/bots/bot-view';\nexport const probe = BOT_VIEW_COLUMNS;\n");
    const { code, output } = await cruise([relative(root, coreProbe)]);
    expect(code).not.toBe(0);
    expect(output).toMatch(/turn-core-imports-no-feature/);
    expect(output).toMatch(/zz-core-path-probe/);
    await rm(coreProbe, { force: true });
  });
});
