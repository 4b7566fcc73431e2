import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operating (issue 19). Retention (docs/decisions/041-retention.md): per-organization settings,
 * the marks of what was pruned of an ended execution, and two partial indexes that hold only the
 * ended executions not yet pruned of each kind, by end time, so the retention workflow finds its
 * next batch without reading the table. The metrics gauge of executions by workflow and state
 * (decision 034) gets a partial index over non-final states: an index-only scan, never the table.
 */
export class Retention1767600000000 implements MigrationInterface {
  name = 'Retention1767600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "executions" ADD "deltas_pruned_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "executions" ADD "payloads_pruned_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`CREATE INDEX "executions_deltas_prunable_idx" ON "executions" ("ended_at") WHERE ended_at IS NOT NULL AND deltas_pruned_at IS NULL`);
    await queryRunner.query(`CREATE INDEX "executions_payloads_prunable_idx" ON "executions" ("ended_at") WHERE ended_at IS NOT NULL AND payloads_pruned_at IS NULL`);
    await queryRunner.query(
      `CREATE INDEX "executions_active_idx" ON "executions" ("workflow", "state") WHERE state NOT IN ('completed', 'failed', 'cancelled', 'interrupted')`,
    );
    await queryRunner.query(
      `CREATE TABLE "organization_retention" ("organization_id" uuid NOT NULL, "text_delta_days" integer, "call_payload_days" integer, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "organization_retention_pkey" PRIMARY KEY ("organization_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "organization_retention" ADD CONSTRAINT "organization_retention_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "organization_retention" DROP CONSTRAINT "organization_retention_organization_id_fkey"`);
    await queryRunner.query(`DROP TABLE "organization_retention"`);
    await queryRunner.query(`DROP INDEX "public"."executions_active_idx"`);
    await queryRunner.query(`DROP INDEX "public"."executions_payloads_prunable_idx"`);
    await queryRunner.query(`DROP INDEX "public"."executions_deltas_prunable_idx"`);
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "payloads_pruned_at"`);
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "deltas_pruned_at"`);
  }
}
