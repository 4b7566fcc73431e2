import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-organization limits (issue 44, decision 076). Admission counts the Chat's queued Turns and,
 * when a message starts a Turn, the organization's running ones: a partial index of the Turns
 * that have not ended keeps those counts to the Turns open now, not every Turn ever taken.
 */
export class OrganizationLimits1767870000000 implements MigrationInterface {
  name = 'OrganizationLimits1767870000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "chat_turns_open_idx" ON "chat_turns" ("chat_id", "state") WHERE "state" <> 'ended'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."chat_turns_open_idx"`);
  }
}
