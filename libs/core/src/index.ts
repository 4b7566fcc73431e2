export * from './chat';
export * from './model/model-provider';
export * from './providers/sse';
export * from './providers/openai-compatible';
export * from './turn/model-step';
export * from './turn/tool-step';
export * from './context/context-window';
export * from './host/in-memory-host';
