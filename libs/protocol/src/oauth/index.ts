export * from './authorization-code';
export * from './discovery';
export * from './oauth-failure';
export * from './registration-order';
