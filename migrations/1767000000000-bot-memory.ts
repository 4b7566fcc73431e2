import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bot memory (issue 16, decision 030). `bots.memory` switches selection and learning on.
 * `memory_items` keeps each item's tags, access rule, source links and status in the clear (they
 * are read first, MEM-01) and its content sealed; `memory_words` holds keyed HMACs of the
 * content's normalized words, never the words themselves. `memory_cursors` is how far learning got per
 * Chat (it only moves forward, FW-03); `memory_permits` are the shared helper-call permits
 * (LIM-01), one numbered slot per learning execution that holds one.
 */
export class BotMemory1767000000000 implements MigrationInterface {
  name = 'BotMemory1767000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "bots" ADD "memory" jsonb NOT NULL DEFAULT '{"enabled":false,"learn":false}'`);
    await queryRunner.query(
      `CREATE TABLE "memory_items" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "bot_id" uuid NOT NULL, "tags" text array NOT NULL DEFAULT '{}', "access" jsonb NOT NULL DEFAULT '{"kind":"bot"}', "sources" jsonb NOT NULL DEFAULT '[]', "status" text NOT NULL DEFAULT 'active', "words_key_id" text NOT NULL, "tokens" integer NOT NULL, "content_key_id" text NOT NULL, "content" bytea NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "memory_items_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "memory_items_bot_id_id_idx" ON "memory_items" ("bot_id", "id")`);
    await queryRunner.query(`CREATE INDEX "memory_items_tags_idx" ON "memory_items" USING gin ("tags")`);
    await queryRunner.query(
      `ALTER TABLE "memory_items" ADD CONSTRAINT "memory_items_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "memory_items" ADD CONSTRAINT "memory_items_bot_id_fkey" FOREIGN KEY ("bot_id") REFERENCES "bots"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    // Selection counts word matches per item from this index (one index range per query word), not from arrays per row.
    await queryRunner.query(
      `CREATE TABLE "memory_words" ("bot_id" uuid NOT NULL, "word" text NOT NULL, "item_id" uuid NOT NULL, CONSTRAINT "memory_words_pkey" PRIMARY KEY ("bot_id", "word", "item_id"))`,
    );
    await queryRunner.query(`CREATE INDEX "memory_words_item_id_idx" ON "memory_words" ("item_id")`);
    await queryRunner.query(
      `ALTER TABLE "memory_words" ADD CONSTRAINT "memory_words_item_id_fkey" FOREIGN KEY ("item_id") REFERENCES "memory_items"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "memory_cursors" ("bot_id" uuid NOT NULL, "chat_id" uuid NOT NULL, "position" bigint NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "memory_cursors_pkey" PRIMARY KEY ("bot_id", "chat_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "memory_cursors" ADD CONSTRAINT "memory_cursors_bot_id_fkey" FOREIGN KEY ("bot_id") REFERENCES "bots"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "memory_permits" ("slot" integer NOT NULL, "execution_id" uuid NOT NULL, "taken_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "memory_permits_pkey" PRIMARY KEY ("slot"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "memory_permits_execution_id_key" ON "memory_permits" ("execution_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "memory_permits"`);
    await queryRunner.query(`DROP TABLE "memory_cursors"`);
    await queryRunner.query(`DROP TABLE "memory_words"`);
    await queryRunner.query(`DROP TABLE "memory_items"`);
    await queryRunner.query(`ALTER TABLE "bots" DROP COLUMN "memory"`);
  }
}
