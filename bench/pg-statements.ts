/**
 * The diagnostic `BENCH_PG_STATEMENTS=1` of the benchmarks: what pg_stat_statements counted in
 * the current database since its last reset, per unit of work (a Turn, an execution), by calls,
 * with each statement's mean time. Needs `shared_preload_libraries=pg_stat_statements` and the
 * extension created in the database.
 */
export async function statementLines(
  query: (sql: string) => Promise<ReadonlyArray<{ query: string; calls: string; mean_ms: number }>>,
  units: number,
  unit: string,
  top: number,
): Promise<string[]> {
  const rows = await query(
    `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::text AS calls, mean_exec_time AS mean_ms
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY pg_stat_statements.calls DESC`,
  );
  const calls = rows.reduce((sum, r) => sum + Number(r.calls), 0);
  return [
    `statements: ${(calls / units).toFixed(1)} calls/${unit}`,
    ...rows.slice(0, top).map((r) => `  ${(Number(r.calls) / units).toFixed(2).padStart(7)}/${unit} ${r.mean_ms.toFixed(2).padStart(7)} ms mean  ${r.query.slice(0, 150)}`),
  ];
}
