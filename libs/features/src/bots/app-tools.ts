import { visibilityOf } from '@openbot/protocol';
import type { BotTool } from './bot-view';

/**
 * A Bot's tools as a Turn uses them: each `app` entry becomes one tool per saved declaration,
 * under the declaration's model name, with the entry's approval policy (it applies to each of its
 * tools).
 */
export function expandAppTools(tools: readonly BotTool[]): BotTool[] {
  return tools.flatMap((tool): BotTool[] => {
    if (tool.kind !== 'app') return [tool];
    // A tool only a View may call (MCP Apps visibility `app`) is not offered to the model.
    return (tool.declarations ?? []).filter((declaration) => visibilityOf(declaration).includes('model')).map((declaration) => ({
      name: declaration.modelName,
      description: declaration.description,
      parameters: declaration.inputSchema,
      kind: 'app',
      connectionId: declaration.connectionId,
      declaration,
      ...(tool.approval === undefined ? {} : { approval: tool.approval }),
      ...(tool.approvalExpiresInSeconds === undefined ? {} : { approvalExpiresInSeconds: tool.approvalExpiresInSeconds }),
      ...(tool.approvers === undefined ? {} : { approvers: tool.approvers }),
    }));
  });
}
