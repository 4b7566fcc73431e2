import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Error records name the execution they belong to, so a later release failure links to it (ERR-04). */
export class ErrorRecordsExecution1764800000000 implements MigrationInterface {
  name = 'ErrorRecordsExecution1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "error_records" ADD "execution_id" uuid`);
    await queryRunner.query(`CREATE INDEX "error_records_execution_id_idx" ON "error_records" ("execution_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."error_records_execution_id_idx"`);
    await queryRunner.query(`ALTER TABLE "error_records" DROP COLUMN "execution_id"`);
  }
}
