import type { ToolDefinition } from '@openbot/core';
import type { BotTool, BotToolKind } from './tool-spec';

/** What the model sees of a Bot tool: name, description and parameters, never its route. */
export function toolDefinition(tool: BotTool): ToolDefinition {
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}

export function toolKind(tool: BotTool): BotToolKind {
  return tool.kind ?? 'client';
}
