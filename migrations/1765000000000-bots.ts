import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Bots of an organization: model, instructions and tool definitions (jsonb). */
export class Bots1765000000000 implements MigrationInterface {
  name = 'Bots1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "bots" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" text NOT NULL, "model" text NOT NULL, "instructions" text NOT NULL, "tools" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "bots_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "bots_organization_id_id_idx" ON "bots" ("organization_id", "id") `);
    await queryRunner.query(`ALTER TABLE "bots" ADD CONSTRAINT "bots_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "bots" DROP CONSTRAINT "bots_organization_id_fkey"`);
    await queryRunner.query(`DROP INDEX "public"."bots_organization_id_id_idx"`);
    await queryRunner.query(`DROP TABLE "bots"`);
  }
}
