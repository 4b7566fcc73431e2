import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The safe detail of a failure an outside service answered (issue 46, decision 082): a model
 * provider's status, error code and scrubbed first line, kept in clear beside the category so an
 * execution's view can show it. The full cause stays in the sealed record (ERR-01).
 */
export class ErrorRecordDetail1767890000000 implements MigrationInterface {
  name = 'ErrorRecordDetail1767890000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "error_records" ADD "detail" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "error_records" DROP COLUMN "detail"`);
  }
}
