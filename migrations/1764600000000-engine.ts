import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The durable execution engine: executions, command keys, the event log, the call log, stored
 * signals, durable timers and child notices (issue 3). Queue jobs live in pg-boss's own schema,
 * which `openbot migrate` installs after these migrations.
 */
export class Engine1764600000000 implements MigrationInterface {
  name = 'Engine1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "execution_child_notices" ("parent_id" uuid NOT NULL, "child_id" uuid NOT NULL, "state" text NOT NULL, "consumed_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "execution_child_notices_pkey" PRIMARY KEY ("parent_id", "child_id"))`);
    await queryRunner.query(`CREATE TABLE "execution_calls" ("id" uuid NOT NULL, "execution_id" uuid NOT NULL, "call_key" text NOT NULL, "step" integer NOT NULL, "attempt" integer NOT NULL, "generation" integer NOT NULL, "safe" boolean NOT NULL, "status" text NOT NULL, "idempotency_key" text NOT NULL, "key_id" text, "result" bytea, "error_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "execution_calls_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "execution_calls_key_attempt_idx" ON "execution_calls" ("execution_id", "call_key", "attempt")`);
    await queryRunner.query(`CREATE TABLE "execution_commands" ("scope_kind" text NOT NULL, "scope_id" uuid NOT NULL, "target" text NOT NULL, "command_key" text NOT NULL, "input_hash" bytea NOT NULL, "execution_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "execution_commands_pkey" PRIMARY KEY ("scope_kind", "scope_id", "target", "command_key"))`);
    await queryRunner.query(`CREATE TABLE "execution_events" ("execution_id" uuid NOT NULL, "seq" integer NOT NULL, "type" text NOT NULL, "step" integer, "attempt" integer, "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "key_id" text, "data" bytea, CONSTRAINT "execution_events_pkey" PRIMARY KEY ("execution_id", "seq"))`);
    await queryRunner.query(`CREATE TABLE "execution_signals" ("id" uuid NOT NULL, "execution_id" uuid NOT NULL, "name" text NOT NULL, "cancel_phase" integer, "key_id" text, "data" bytea, "consumed_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "execution_signals_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "execution_signals_pending_idx" ON "execution_signals" ("execution_id", "id") WHERE consumed_at IS NULL`);
    await queryRunner.query(`CREATE TABLE "execution_timers" ("id" uuid NOT NULL, "execution_id" uuid NOT NULL, "due_at" TIMESTAMP WITH TIME ZONE NOT NULL, "fired_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "execution_timers_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "execution_timers_execution_id_idx" ON "execution_timers" ("execution_id")`);
    await queryRunner.query(`CREATE TABLE "executions" ("id" uuid NOT NULL, "workflow" text NOT NULL, "organization_id" uuid, "scope_kind" text NOT NULL, "scope_id" uuid NOT NULL, "resource_type" text, "resource_id" text, "parent_id" uuid, "attached" boolean NOT NULL DEFAULT true, "state" text NOT NULL, "step" integer NOT NULL DEFAULT '0', "generation" integer NOT NULL DEFAULT '1', "owner_node" text, "lease_until" TIMESTAMP WITH TIME ZONE, "cancel_phase" integer NOT NULL DEFAULT '0', "last_seq" integer NOT NULL DEFAULT '0', "key_id" text NOT NULL, "data" bytea NOT NULL, "error_id" uuid, "category" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "ended_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "executions_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "executions_organization_id_id_idx" ON "executions" ("organization_id", "id")`);
    await queryRunner.query(`CREATE INDEX "executions_parent_id_idx" ON "executions" ("parent_id")`);
    await queryRunner.query(`CREATE INDEX "executions_resource_idx" ON "executions" ("resource_type", "resource_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."executions_resource_idx"`);
    await queryRunner.query(`DROP INDEX "public"."executions_parent_id_idx"`);
    await queryRunner.query(`DROP INDEX "public"."executions_organization_id_id_idx"`);
    await queryRunner.query(`DROP TABLE "executions"`);
    await queryRunner.query(`DROP INDEX "public"."execution_timers_execution_id_idx"`);
    await queryRunner.query(`DROP TABLE "execution_timers"`);
    await queryRunner.query(`DROP INDEX "public"."execution_signals_pending_idx"`);
    await queryRunner.query(`DROP TABLE "execution_signals"`);
    await queryRunner.query(`DROP TABLE "execution_events"`);
    await queryRunner.query(`DROP TABLE "execution_commands"`);
    await queryRunner.query(`DROP INDEX "public"."execution_calls_key_attempt_idx"`);
    await queryRunner.query(`DROP TABLE "execution_calls"`);
    await queryRunner.query(`DROP TABLE "execution_child_notices"`);
  }
}
