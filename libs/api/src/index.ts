export * from './http-app';
export * from './errors/error-boundary.filter';
export * from './openapi/openapi';
