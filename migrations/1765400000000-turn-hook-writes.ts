import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The writes Turn plugins made at named steps, so a replayed hook skips them (STC-08). */
export class TurnHookWrites1765400000000 implements MigrationInterface {
  name = 'TurnHookWrites1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "turn_hook_writes" ("execution_id" uuid NOT NULL, "plugin" text NOT NULL, "point" text NOT NULL, "step" integer NOT NULL, "key" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "turn_hook_writes_pkey" PRIMARY KEY ("execution_id", "plugin", "point", "step", "key"))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "turn_hook_writes"`);
  }
}
