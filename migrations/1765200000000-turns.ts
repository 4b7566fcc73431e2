import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Bot limits; Turns, messages, message command keys and client tool calls of Chats; usage records of model calls. */
export class Turns1765200000000 implements MigrationInterface {
  name = 'Turns1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "bots" ADD "limits" jsonb NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`CREATE TABLE "chat_commands" ("scope_kind" text NOT NULL, "scope_id" uuid NOT NULL, "chat_id" uuid NOT NULL, "command_key" text NOT NULL, "input_hash" bytea NOT NULL, "answer" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "chat_commands_pkey" PRIMARY KEY ("scope_kind", "scope_id", "chat_id", "command_key"))`);
    await queryRunner.query(`CREATE TABLE "chat_turns" ("id" uuid NOT NULL, "chat_id" uuid NOT NULL, "seq" integer NOT NULL, "execution_id" uuid NOT NULL, "state" text NOT NULL, "scope_kind" text NOT NULL, "scope_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "ended_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "chat_turns_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "chat_turns_execution_id_key" ON "chat_turns"  ("execution_id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "chat_turns_chat_id_seq_key" ON "chat_turns"  ("chat_id", "seq") `);
    await queryRunner.query(`CREATE TABLE "chat_messages" ("id" uuid NOT NULL, "chat_id" uuid NOT NULL, "turn_id" uuid NOT NULL, "position" bigint NOT NULL, "role" text NOT NULL, "content" text NOT NULL, "tool_calls" jsonb, "tool_call_id" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "chat_messages_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "chat_messages_turn_id_idx" ON "chat_messages"  ("turn_id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "chat_messages_chat_id_position_key" ON "chat_messages"  ("chat_id", "position") `);
    await queryRunner.query(`CREATE TABLE "chat_client_tool_calls" ("turn_id" uuid NOT NULL, "call_id" text NOT NULL, "name" text NOT NULL, "arguments" text NOT NULL, "model_output" text, "is_error" boolean NOT NULL DEFAULT false, "answered_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "chat_client_tool_calls_pkey" PRIMARY KEY ("turn_id", "call_id"))`);
    await queryRunner.query(`CREATE TABLE "usage_records" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "scope_kind" text NOT NULL, "scope_id" uuid NOT NULL, "bot_id" uuid, "chat_id" uuid, "turn_id" uuid, "execution_id" uuid NOT NULL, "call_id" uuid NOT NULL, "model" text NOT NULL, "status" text NOT NULL, "input_tokens" integer, "output_tokens" integer, "estimated_input_tokens" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "settled_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "usage_records_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "usage_records_organization_id_id_idx" ON "usage_records"  ("organization_id", "id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "usage_records_call_id_key" ON "usage_records"  ("call_id") `);
    await queryRunner.query(`ALTER TABLE "chats" ADD "closed_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "chats" ADD "active_turn_id" uuid`);
    await queryRunner.query(`ALTER TABLE "chats" ADD "last_position" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "chats" ADD "last_turn_seq" integer NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "chat_commands" ADD CONSTRAINT "chat_commands_chat_id_fkey" FOREIGN KEY ("chat_id") REFERENCES "chats"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "chat_turns" ADD CONSTRAINT "chat_turns_chat_id_fkey" FOREIGN KEY ("chat_id") REFERENCES "chats"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "chat_messages" ADD CONSTRAINT "chat_messages_chat_id_fkey" FOREIGN KEY ("chat_id") REFERENCES "chats"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "chat_messages" ADD CONSTRAINT "chat_messages_turn_id_fkey" FOREIGN KEY ("turn_id") REFERENCES "chat_turns"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "chat_client_tool_calls" ADD CONSTRAINT "chat_client_tool_calls_turn_id_fkey" FOREIGN KEY ("turn_id") REFERENCES "chat_turns"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "usage_records" DROP CONSTRAINT "usage_records_organization_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "chat_client_tool_calls" DROP CONSTRAINT "chat_client_tool_calls_turn_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "chat_messages" DROP CONSTRAINT "chat_messages_turn_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "chat_messages" DROP CONSTRAINT "chat_messages_chat_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "chat_turns" DROP CONSTRAINT "chat_turns_chat_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "chat_commands" DROP CONSTRAINT "chat_commands_chat_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "chats" DROP COLUMN "last_turn_seq"`);
    await queryRunner.query(`ALTER TABLE "chats" DROP COLUMN "last_position"`);
    await queryRunner.query(`ALTER TABLE "chats" DROP COLUMN "active_turn_id"`);
    await queryRunner.query(`ALTER TABLE "chats" DROP COLUMN "closed_at"`);
    await queryRunner.query(`DROP INDEX "public"."usage_records_call_id_key"`);
    await queryRunner.query(`DROP INDEX "public"."usage_records_organization_id_id_idx"`);
    await queryRunner.query(`DROP TABLE "usage_records"`);
    await queryRunner.query(`DROP TABLE "chat_client_tool_calls"`);
    await queryRunner.query(`DROP INDEX "public"."chat_messages_chat_id_position_key"`);
    await queryRunner.query(`DROP INDEX "public"."chat_messages_turn_id_idx"`);
    await queryRunner.query(`DROP TABLE "chat_messages"`);
    await queryRunner.query(`DROP INDEX "public"."chat_turns_chat_id_seq_key"`);
    await queryRunner.query(`DROP INDEX "public"."chat_turns_execution_id_key"`);
    await queryRunner.query(`DROP TABLE "chat_turns"`);
    await queryRunner.query(`DROP TABLE "chat_commands"`);
    await queryRunner.query(`ALTER TABLE "bots" DROP COLUMN "limits"`);
  }
}
