import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator's stuck-work view (`GET /v1/platform/executions/stuck`) lists executions that sit
 * in `waiting`, `outcome_unknown` or `cancelling` since before a threshold. This partial index
 * holds only those rows, by the time of their last change, so the view never scans the table.
 */
export class UnsettledExecutionsIndex1766660000000 implements MigrationInterface {
  name = 'UnsettledExecutionsIndex1766660000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "executions_unsettled_idx" ON "executions" ("updated_at") WHERE state IN ('waiting', 'outcome_unknown', 'cancelling')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."executions_unsettled_idx"`);
  }
}
