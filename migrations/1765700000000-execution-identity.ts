import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Each execution keeps its sealed ExecutionIdentity (IDN-01, SEC-01); null for work submitted without one. */
export class ExecutionIdentity1765700000000 implements MigrationInterface {
  name = 'ExecutionIdentity1765700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "executions" ADD "identity_key_id" text`);
    await queryRunner.query(`ALTER TABLE "executions" ADD "identity" bytea`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "identity"`);
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "identity_key_id"`);
  }
}
