import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Waits on another execution's end and pause (issue 12): `execution_awaits` names who waits for
 * which execution; `awaited` sends that execution's end down the transactional path that wakes
 * its waiters; `paused` is a flag on a waiting execution, not a state of its own.
 */
export class AwaitsAndPause1766200000000 implements MigrationInterface {
  name = 'AwaitsAndPause1766200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "executions" ADD "awaited" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`ALTER TABLE "executions" ADD "paused" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(
      `CREATE TABLE "execution_awaits" ("target_id" uuid NOT NULL, "waiter_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "execution_awaits_pkey" PRIMARY KEY ("target_id", "waiter_id"))`,
    );
    await queryRunner.query(`CREATE INDEX "execution_awaits_waiter_id_idx" ON "execution_awaits" ("waiter_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "execution_awaits"`);
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "paused"`);
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "awaited"`);
  }
}
