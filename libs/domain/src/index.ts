export * from './ids';
export * from './failures';
export * from './pagination';
export * from './roles';
export * from './error-category';
export * from './caller';
export * from './execution-state';
export * from './new-id';
