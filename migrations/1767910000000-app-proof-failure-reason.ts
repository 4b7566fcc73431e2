import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why a domain proof's last verification failed (issue 46): the HTTP status, a wrong answer, or
 * why the domain could not be reached, as a fixed phrase. Null while pending and once verified;
 * proofs that failed before it existed keep null (nothing recorded why).
 */
export class AppProofFailureReason1767910000000 implements MigrationInterface {
  name = 'AppProofFailureReason1767910000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_proofs" ADD "failure_reason" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_proofs" DROP COLUMN "failure_reason"`);
  }
}
