import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every checkpoint updates its execution's row. Leaving room on each page lets PostgreSQL keep
 * the new row version on the same page without touching the indexes (a HOT update), which keeps
 * a durable step close to the cost of a plain commit (docs/benchmarks.md `engine`).
 */
export class ExecutionsFillfactor1764700000000 implements MigrationInterface {
  name = 'ExecutionsFillfactor1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "executions" SET (fillfactor = 70)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "executions" RESET (fillfactor)');
  }
}
