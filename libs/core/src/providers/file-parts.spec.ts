import { toolMessage, type ChatMessage, type FilePart } from '../model/chat';
import { ANTHROPIC_FILE_PARTS, toAnthropicMessages } from './anthropic';
import { OPENAI_FILE_PARTS, toOpenAiMessages } from './openai-compatible';

const IMAGE: FilePart = { type: 'image', name: 'chart.png', mediaType: 'image/png', data: 'iVBORw0KGgo=' };
const PDF: FilePart = { type: 'document', name: 'report.pdf', mediaType: 'application/pdf', data: 'JVBERi0=' };
const TEXT: FilePart = { type: 'text', name: 'notes.txt', text: 'line one' };

/** Files reach each provider as its wire format supports them (issue 16; STC-09 for tool results). */
describe('file parts on the provider wire formats', () => {
  it('each adapter declares what it sends natively', () => {
    expect(OPENAI_FILE_PARTS).toEqual(['text', 'image']);
    expect(ANTHROPIC_FILE_PARTS).toEqual(['text', 'image', 'document']);
  });

  it('OpenAI: a user message with files becomes content parts (text, image_url data URL); a PDF becomes a note', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Look', files: [TEXT, IMAGE, PDF] }];
    expect(toOpenAiMessages(messages)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'text', text: 'File "notes.txt":\nline one' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'text', text: '[file "report.pdf" (application/pdf) cannot be shown to this model]' },
        ],
      },
    ]);
    // Without files the content stays a plain string; empty text with files has no empty text part.
    expect(toOpenAiMessages([{ role: 'user', content: 'hi' }])).toEqual([{ role: 'user', content: 'hi' }]);
    expect(toOpenAiMessages([{ role: 'user', content: '', files: [IMAGE] }])[0]).toEqual({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] });
  });

  it('[STC-09] OpenAI: tool results keep text in the tool message; their images follow the run of tool messages in one user message', () => {
    const assistant: ChatMessage = {
      role: 'assistant',
      content: '',
      toolCalls: [
        { callId: 'c1', name: 'plot', arguments: '{}' },
        { callId: 'c2', name: 'read', arguments: '{}' },
      ],
    };
    const out = toOpenAiMessages([
      assistant,
      toolMessage({ callId: 'c1', name: 'plot', modelOutput: 'plotted', isError: false, modelOutputFiles: [IMAGE] }),
      toolMessage({ callId: 'c2', name: 'read', modelOutput: 'read it', isError: false, modelOutputFiles: [TEXT] }),
    ]);
    expect(out.map((m) => m.role)).toEqual(['assistant', 'tool', 'tool', 'user']);
    expect(out[1]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'plotted' });
    expect(out[2]).toEqual({ role: 'tool', tool_call_id: 'c2', content: 'read it\n\nFile "notes.txt":\nline one' });
    expect(out[3]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Images from tool call c1:' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    });
  });

  it('Anthropic: a user message with files becomes text, image and document blocks with base64 sources', () => {
    expect(toAnthropicMessages([{ role: 'user', content: 'Look', files: [TEXT, IMAGE, PDF] }])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'text', text: 'File "notes.txt":\nline one' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'report.pdf' },
        ],
      },
    ]);
  });

  it('[STC-09] Anthropic: a tool result with files carries them as blocks inside its tool_result', () => {
    const out = toAnthropicMessages([
      { role: 'assistant', content: '', toolCalls: [{ callId: 'c1', name: 'plot', arguments: '{}' }] },
      toolMessage({ callId: 'c1', name: 'plot', modelOutput: 'plotted', isError: false, modelOutputFiles: [IMAGE] }),
    ]);
    expect(out[1]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'c1',
          content: [
            { type: 'text', text: 'plotted' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    // Without files a tool result stays a plain string.
    const plain = toAnthropicMessages([toolMessage({ callId: 'c2', name: 'x', modelOutput: 'ok', isError: false })]);
    expect(plain).toEqual([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c2', content: 'ok' }] }]);
  });
});
