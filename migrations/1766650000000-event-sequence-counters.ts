import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Event sequence numbers move off the execution row (docs/decisions/033-event-sequence-counters.md):
 * a running phase publishes its deltas many times a second, and each publish used to update the
 * wide `executions` row only to bump `last_seq`. The counter now lives in a row of its own, taken
 * by every event writer after its lock on the execution row; a phase's publish only shares that
 * lock, which is enough to fence it (a take-over waits for it and then outranks it).
 */
export class EventSequenceCounters1766650000000 implements MigrationInterface {
  name = 'EventSequenceCounters1766650000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "execution_event_seqs" ("execution_id" uuid NOT NULL, "last_seq" integer NOT NULL, CONSTRAINT "execution_event_seqs_pkey" PRIMARY KEY ("execution_id")) WITH (fillfactor = 50)`,
    );
    await queryRunner.query(`INSERT INTO "execution_event_seqs" ("execution_id", "last_seq") SELECT "id", "last_seq" FROM "executions" WHERE "last_seq" > 0`);
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "last_seq"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "executions" ADD "last_seq" integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`UPDATE "executions" x SET "last_seq" = s."last_seq" FROM "execution_event_seqs" s WHERE s."execution_id" = x."id"`);
    await queryRunner.query(`DROP TABLE "execution_event_seqs"`);
  }
}
