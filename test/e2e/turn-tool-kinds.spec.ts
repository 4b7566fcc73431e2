import { newId } from '@openbot/domain';
import { ApprovalGates } from '../../libs/platform/src/turn-core/approval-gate';
import { ChatInputPort } from '../../libs/platform/src/turn-core/chat-inputs';
import { BOT_TOOL_KINDS } from '../../libs/platform/src/turn-core/tool-spec';
import { TurnTools } from '../../libs/platform/src/turn-core/turn-tool';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The Turn core's ports are filled by the features' own modules (decision 078): a node built
 * from OpenbotModule has every tool kind a Bot may declare, one approval gate and one chat-input
 * service. A kind no feature registered would otherwise surface only when a Turn first calls it.
 */
describe('the Turn core ports on a running node', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('every tool kind a Bot may declare is registered once, by the feature that owns it', () => {
    const tools = t.app.get(TurnTools);
    for (const kind of BOT_TOOL_KINDS) {
      const tool = tools.of(kind);
      expect(tool.kind).toBe(kind);
      // An outside send says how it repeats; an inside answer runs only within a Turn.
      expect(tool.answers === 'send' ? typeof tool.repeatSafe : typeof tool.answer).toBe('function');
      // A second registration of the same kind is refused: one feature owns a kind.
      expect(() => tools.register(tool)).toThrow(`tool kind "${kind}" is registered twice`);
    }
    expect(BOT_TOOL_KINDS.filter((kind) => tools.of(kind).needsChild)).toEqual(['background', 'delegate']);
    expect(BOT_TOOL_KINDS.filter((kind) => tools.of(kind).answers === 'send')).toEqual(['http', 'app']);
  });

  it("the approval gate is the Approvals feature's: it reads the approvals table and never takes a missing record as a yes", async () => {
    const gates = t.app.get(ApprovalGates);
    const gated = { callId: 'call-1', approvalId: newId(), expiresAt: null };
    await expect(gates.read(newId(), gated, Date.now())).rejects.toThrow(`approval ${gated.approvalId} of call call-1 is missing`);
    expect(() => gates.register(gates)).toThrow('an approval gate is registered twice');
  });

  it('message admission is registered by the Chats feature', () => {
    const port = t.app.get(ChatInputPort);
    expect(() => port.register(port)).toThrow('chat inputs are registered twice');
  });
});
