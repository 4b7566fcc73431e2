import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Recurring schedules (docs/decisions/022-schedules-on-croner.md): a schedule row with its next
 * fire time, and one fire row per (schedule, fire time) written in the same transaction as the
 * execution it submits (STC-01), so a fire time runs at most once across nodes and restarts.
 * Call rows get their kind (`model`, `tool`, ...) for the shared call queries (STC-10).
 */
export class SchedulesAndCallKinds1766300000000 implements MigrationInterface {
  name = 'SchedulesAndCallKinds1766300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "schedules" ("id" uuid NOT NULL, "name" text NOT NULL, "cron" text NOT NULL, "time_zone" text NOT NULL, "workflow" text NOT NULL, "organization_id" uuid, "scope_kind" text NOT NULL, "scope_id" uuid NOT NULL, "resource_type" text, "resource_id" text, "key_id" text NOT NULL, "input" bytea NOT NULL, "identity_key_id" text, "identity" bytea, "missed" text NOT NULL, "catch_up_seconds" integer, "next_fire_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "schedules_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "schedules_name_idx" ON "schedules" ("name")`);
    await queryRunner.query(`CREATE INDEX "schedules_next_fire_at_idx" ON "schedules" ("next_fire_at")`);
    await queryRunner.query(`CREATE TABLE "schedule_fires" ("schedule_id" uuid NOT NULL, "fire_at" TIMESTAMP WITH TIME ZONE NOT NULL, "execution_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "schedule_fires_pkey" PRIMARY KEY ("schedule_id", "fire_at"))`);
    await queryRunner.query(`ALTER TABLE "execution_calls" ADD "kind" text NOT NULL DEFAULT 'other'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "execution_calls" DROP COLUMN "kind"`);
    await queryRunner.query(`DROP TABLE "schedule_fires"`);
    await queryRunner.query(`DROP INDEX "public"."schedules_next_fire_at_idx"`);
    await queryRunner.query(`DROP INDEX "public"."schedules_name_idx"`);
    await queryRunner.query(`DROP TABLE "schedules"`);
  }
}
