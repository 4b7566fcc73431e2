import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approvals (issue 15, decision 025): a durable request per tool call that needs a person's yes,
 * written in the Turn's checkpoint with the saved call and its `approval.requested` event
 * (APPR-01). One per (execution, step, call); listed newest first per organization.
 * `execution_pauses`: when an execution was paused and for how long in all, so its time limit
 * counts only while it can run (TASK-03). `execution_limits`: a Turn's limits and what it spent,
 * written with each of its checkpoints, for `GET /v1/executions/{id}`.
 */
export class ApprovalsAndTasks1766500000000 implements MigrationInterface {
  name = 'ApprovalsAndTasks1766500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "approvals" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "execution_id" uuid NOT NULL, "chat_id" uuid NOT NULL, "turn_id" uuid NOT NULL, "call_id" text NOT NULL, "step" integer NOT NULL, "tool_name" text NOT NULL, "arguments" text NOT NULL, "state" text NOT NULL DEFAULT 'pending', "requested_at" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE, "decided_at" TIMESTAMP WITH TIME ZONE, "decided_by_kind" text, "decided_by_id" uuid, "reason" text, CONSTRAINT "approvals_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "approvals_execution_id_step_call_id_key" ON "approvals" ("execution_id", "step", "call_id")`);
    await queryRunner.query(`CREATE INDEX "approvals_organization_id_id_idx" ON "approvals" ("organization_id", "id")`);
    await queryRunner.query(`CREATE INDEX "approvals_chat_id_idx" ON "approvals" ("chat_id")`);
    await queryRunner.query(
      `ALTER TABLE "approvals" ADD CONSTRAINT "approvals_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "approvals" ADD CONSTRAINT "approvals_chat_id_fkey" FOREIGN KEY ("chat_id") REFERENCES "chats"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "approvals" ADD CONSTRAINT "approvals_turn_id_fkey" FOREIGN KEY ("turn_id") REFERENCES "chat_turns"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "execution_pauses" ("execution_id" uuid NOT NULL, "paused_at" TIMESTAMP WITH TIME ZONE, "paused_ms" bigint NOT NULL DEFAULT '0', CONSTRAINT "execution_pauses_pkey" PRIMARY KEY ("execution_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "execution_limits" ("execution_id" uuid NOT NULL, "max_steps" integer NOT NULL, "max_seconds" integer NOT NULL, "max_output_tokens" integer NOT NULL, "max_cost_micros" bigint, "steps" integer NOT NULL, "output_tokens" bigint NOT NULL, "active_ms" bigint NOT NULL, "counting_since" TIMESTAMP WITH TIME ZONE, "paused_ms_seen" bigint NOT NULL, "final_stop" text, CONSTRAINT "execution_limits_pkey" PRIMARY KEY ("execution_id"))`,
    );
    // A task's Chat names the execution that delegated it.
    await queryRunner.query(`ALTER TABLE "chats" ADD "parent_execution_id" uuid`);
    // The plan a Turn's update_plan tool saved last, written with the Turn's checkpoint.
    await queryRunner.query(
      `CREATE TABLE "execution_plans" ("execution_id" uuid NOT NULL, "steps" jsonb NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "execution_plans_pkey" PRIMARY KEY ("execution_id"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "execution_plans"`);
    await queryRunner.query(`ALTER TABLE "chats" DROP COLUMN "parent_execution_id"`);
    await queryRunner.query(`DROP TABLE "execution_limits"`);
    await queryRunner.query(`DROP TABLE "execution_pauses"`);
    await queryRunner.query(`DROP TABLE "approvals"`);
  }
}
