import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Chats of an organization with one of its Bots; a Bot with Chats cannot be deleted (RESTRICT). */
export class Chats1765100000000 implements MigrationInterface {
  name = 'Chats1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "chats" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "bot_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "chats_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "chats_organization_id_id_idx" ON "chats" ("organization_id", "id") `);
    await queryRunner.query(`CREATE INDEX "chats_bot_id_idx" ON "chats" ("bot_id") `);
    await queryRunner.query(`ALTER TABLE "chats" ADD CONSTRAINT "chats_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "chats" ADD CONSTRAINT "chats_bot_id_fkey" FOREIGN KEY ("bot_id") REFERENCES "bots"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chats" DROP CONSTRAINT "chats_bot_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "chats" DROP CONSTRAINT "chats_organization_id_fkey"`);
    await queryRunner.query(`DROP INDEX "public"."chats_bot_id_idx"`);
    await queryRunner.query(`DROP INDEX "public"."chats_organization_id_id_idx"`);
    await queryRunner.query(`DROP TABLE "chats"`);
  }
}
