import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Files on messages (issue 16, decision 036): a user message's `fileIds`, and the files a tool
 * result hands the model (STC-09), on the message and on a client tool call's posted output.
 * IDs only, no foreign key: a file deleted later stays named, and its Turns tell the model so.
 */
export class MessageFiles1767300000000 implements MigrationInterface {
  name = 'MessageFiles1767300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_messages" ADD "file_ids" uuid array NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`ALTER TABLE "chat_client_tool_calls" ADD "file_ids" uuid array NOT NULL DEFAULT '{}'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_client_tool_calls" DROP COLUMN "file_ids"`);
    await queryRunner.query(`ALTER TABLE "chat_messages" DROP COLUMN "file_ids"`);
  }
}
