import type { ToolResult } from '../model/chat';
import { runToolStep, type LocalTool } from './tool-step';

const echo: LocalTool = {
  definition: { name: 'echo', description: 'Echo', parameters: { type: 'object' } },
  handler: ({ arguments: args }) => ({ modelOutput: `echo:${JSON.stringify(args)}` }),
};
const broken: LocalTool = {
  definition: { name: 'broken', description: 'Fails', parameters: { type: 'object' } },
  handler: () => {
    throw new Error('disk full');
  },
};

describe('tool step', () => {
  it('[STC-09] runs handlers in call order and produces tool messages whose content is modelOutput', async () => {
    const seen: ToolResult[] = [];
    const step = await runToolStep(
      [
        { callId: 'c1', name: 'echo', arguments: '{"a":1}' },
        { callId: 'c2', name: 'echo', arguments: '' },
      ],
      [echo],
      { onResult: (result) => void seen.push(result) },
    );
    expect(step.results).toEqual([
      { callId: 'c1', name: 'echo', modelOutput: 'echo:{"a":1}', isError: false },
      { callId: 'c2', name: 'echo', modelOutput: 'echo:{}', isError: false },
    ]);
    expect(seen).toEqual(step.results);
    expect(step.messages).toEqual([
      { role: 'tool', content: 'echo:{"a":1}', toolCallId: 'c1' },
      { role: 'tool', content: 'echo:{}', toolCallId: 'c2' },
    ]);
  });

  it('turns an unknown tool, bad JSON and a throwing handler into error results the model can read', async () => {
    const step = await runToolStep(
      [
        { callId: 'c1', name: 'missing', arguments: '{}' },
        { callId: 'c2', name: 'echo', arguments: '{not json' },
        { callId: 'c3', name: 'broken', arguments: '{}' },
      ],
      [echo, broken],
    );
    expect(step.results.map((r) => r.isError)).toEqual([true, true, true]);
    expect(step.results[0].modelOutput).toContain('no tool named "missing"');
    expect(step.results[1].modelOutput).toContain('not valid JSON');
    expect(step.results[2].modelOutput).toContain('disk full');
  });
});
