/** A name the model providers accept for a tool (the OpenAI and Anthropic rule). */
export const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The name a server's tool reaches the model under. It is the server's own name when that is a
 * valid model tool name that no other tool of the Bot has; otherwise it is
 * `<last 8 hex digits of the connection ID>_<name>` (the random end of the UUIDv7), every
 * character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64. The same inputs always give the
 * same name, so a saved declaration and a later rename agree.
 *
 * `taken`: the names the Bot's other tools already have (including earlier App tools).
 */
export function modelToolName(connectionId: string, serverName: string, taken: ReadonlySet<string>): string {
  if (MODEL_TOOL_NAME.test(serverName) && !taken.has(serverName)) return serverName;
  const prefix = connectionId.replace(/-/g, '').slice(-8).toLowerCase();
  return `${prefix}_${serverName.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64);
}
