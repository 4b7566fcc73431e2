import { InvalidInput, type BotId, type InputIssue } from '@openbot/domain';

/** A tool definition of a Bot: its parameters are a JSON schema the model fills in. */
export interface BotTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
}

/** What the API may show of a Bot. */
export interface BotView {
  readonly id: BotId;
  readonly name: string;
  /** `<provider name>/<model id>`: the provider is one of the organization's model providers. */
  readonly model: string;
  readonly instructions: string;
  readonly tools: readonly BotTool[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The columns of a BotView, for handlers that read `bots` directly. */
export const BOT_VIEW_COLUMNS = `id, name, model, instructions, tools, created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * Splits a model reference at its first `/` into the provider name and the provider's model id;
 * a reference without `/` or with an empty side is an InvalidInput on `model`.
 */
export function parseModelReference(model: string): { readonly provider: string; readonly modelId: string } {
  const slash = model.indexOf('/');
  const provider = slash < 0 ? '' : model.slice(0, slash);
  const modelId = slash < 0 ? '' : model.slice(slash + 1);
  if (provider === '' || modelId === '') {
    throw new InvalidInput([{ path: 'model', message: 'model must be "<provider name>/<model id>"' }]);
  }
  return { provider, modelId };
}

/** Tool names are unique within a Bot; a repeat is an InvalidInput on that tool's name. */
export function checkToolNames(tools: readonly BotTool[]): void {
  const seen = new Set<string>();
  const issues: InputIssue[] = [];
  tools.forEach((tool, index) => {
    if (seen.has(tool.name)) issues.push({ path: `tools.${index}.name`, message: `tool name "${tool.name}" is used more than once` });
    seen.add(tool.name);
  });
  if (issues.length > 0) throw new InvalidInput(issues);
}

/** The InvalidInput for a model whose provider the organization does not have. */
export function unknownModelProvider(provider: string): InvalidInput {
  return new InvalidInput([{ path: 'model', message: `model provider "${provider}" does not exist in this organization` }]);
}
