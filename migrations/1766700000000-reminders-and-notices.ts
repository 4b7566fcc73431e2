import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reminders and notices (issue 15). `reminders`: what a Turn's `remind` tool set, one per
 * (execution, call), delivered by an execution of its own on a durable timer (APPR-01, FW-06).
 * `chat_messages.author`: who wrote a message that is not its Turn's caller's input: `task` (the
 * notice of a detached task that ended, TASK-04) or `reminder`; null for everything else.
 */
export class RemindersAndNotices1766700000000 implements MigrationInterface {
  name = 'RemindersAndNotices1766700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_messages" ADD "author" text`);
    await queryRunner.query(
      `CREATE TABLE "reminders" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "chat_id" uuid NOT NULL, "execution_id" uuid NOT NULL, "call_id" text NOT NULL, "message" text NOT NULL, "due_at" TIMESTAMP WITH TIME ZONE NOT NULL, "state" text NOT NULL DEFAULT 'pending', "delivery_execution_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "sent_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "reminders_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "reminders_execution_id_call_id_key" ON "reminders" ("execution_id", "call_id")`);
    await queryRunner.query(`CREATE INDEX "reminders_chat_id_id_idx" ON "reminders" ("chat_id", "id")`);
    await queryRunner.query(`CREATE INDEX "reminders_organization_id_id_idx" ON "reminders" ("organization_id", "id")`);
    await queryRunner.query(
      `ALTER TABLE "reminders" ADD CONSTRAINT "reminders_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "reminders" ADD CONSTRAINT "reminders_chat_id_fkey" FOREIGN KEY ("chat_id") REFERENCES "chats"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "reminders"`);
    await queryRunner.query(`ALTER TABLE "chat_messages" DROP COLUMN "author"`);
  }
}
