import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How a Turn ends, as a user sees it (issue 46). `chat_turns.steering_closed`: the Turn makes no
 * more model calls, so its caller's next input queues a Turn of its own instead of steering it
 * (decision 083). `chat_messages.stop`: the limit that stopped the Turn, on its partial reply
 * (decision 084).
 */
export class TurnEnds1767900000000 implements MigrationInterface {
  name = 'TurnEnds1767900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_turns" ADD "steering_closed" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`ALTER TABLE "chat_messages" ADD "stop" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_messages" DROP COLUMN "stop"`);
    await queryRunner.query(`ALTER TABLE "chat_turns" DROP COLUMN "steering_closed"`);
  }
}
