import type { EmbeddedPostgres } from '../../libs/platform/src/database/embedded-postgres';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __openbotTestCluster?: EmbeddedPostgres }).__openbotTestCluster?.stop();
}
