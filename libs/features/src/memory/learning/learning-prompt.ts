import { systemMessage, userMessage, type ChatMessage } from '@openbot/core';
import { MAX_MEMORY_CONTENT_CHARS } from '../memory-view';

/** Most items one learning step may add. */
export const MAX_LEARNED_ITEMS = 16;

const INSTRUCTIONS = [
  "You maintain the long-term memory of an assistant. From the conversation below, extract the facts worth remembering in later conversations:",
  "people's names and roles, preferences, decisions, commitments. Leave out small talk and anything only true for this moment.",
  'Answer with JSON only: {"memories":[{"content":"one fact in one sentence","tags":["topic"]}]}. Answer {"memories":[]} when nothing is worth keeping.',
].join(' ');

/** The prompt of one learning step: the instructions, then the new messages as a transcript. */
export function learningPrompt(messages: ReadonlyArray<{ readonly role: string; readonly content: string }>): ChatMessage[] {
  const transcript = messages.map((m) => `${m.role}: ${m.content}`).join('\n');
  return [systemMessage(INSTRUCTIONS), userMessage(transcript)];
}

/** A learner's answer as read: its well-formed items, and why it could not be read at all (null when it could). */
export interface LearnerAnswer {
  readonly items: Array<{ content: string; tags: string[] }>;
  /** A fixed phrase, never the model's text: the execution's result shows it. */
  readonly unreadable: string | null;
}

/**
 * The items a model answered, as far as they are well-formed: malformed entries are ignored. An
 * answer without a readable `{"memories": [...]}` teaches nothing and fails nothing, but says why
 * in `unreadable`, so the learning execution's result can tell it from an answer with no facts.
 */
export function parseLearned(text: string): LearnerAnswer {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return { items: [], unreadable: 'the answer holds no JSON object' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(start, end + 1));
  } catch {
    return { items: [], unreadable: 'the answer is not valid JSON' };
  }
  const list = (parsed as { memories?: unknown } | null)?.memories;
  if (!Array.isArray(list)) return { items: [], unreadable: 'the answer has no "memories" list' };
  const out: Array<{ content: string; tags: string[] }> = [];
  for (const entry of list) {
    const content = (entry as { content?: unknown } | null)?.content;
    if (typeof content !== 'string' || content.trim() === '') continue;
    const rawTags = (entry as { tags?: unknown }).tags;
    const tags = Array.isArray(rawTags)
      ? [...new Set(rawTags.filter((t): t is string => typeof t === 'string').map((t) => t.trim().toLowerCase()).filter((t) => /^[\p{L}\p{N}_.:-]{1,64}$/u.test(t)))].slice(0, 8)
      : [];
    out.push({ content: content.trim().slice(0, MAX_MEMORY_CONTENT_CHARS), tags });
    if (out.length >= MAX_LEARNED_ITEMS) break;
  }
  return { items: out, unreadable: null };
}
