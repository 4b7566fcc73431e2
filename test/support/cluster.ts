/** Where global setup publishes the shared test cluster to the workers. */
export const TEST_PG_URL_ENV = 'OPENBOT_TEST_PG_URL';
export const TEMPLATE_DATABASE = 'openbot_template';

/** The URL of the shared test cluster's `database`. */
export function clusterUrl(database: string): string {
  const base = process.env[TEST_PG_URL_ENV];
  if (base === undefined) throw new Error(`${TEST_PG_URL_ENV} is unset: run tests through jest (global setup starts PostgreSQL)`);
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}
