import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Model providers of an organization; their API keys live sealed in sealed_records (SEC-01). */
export class ModelProviders1764900000000 implements MigrationInterface {
  name = 'ModelProviders1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "model_providers" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" text NOT NULL, "kind" text NOT NULL, "base_url" text NOT NULL, "api_key_record_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "model_providers_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "model_providers_organization_id_name_key" ON "model_providers" ("organization_id", "name") `);
    await queryRunner.query(`CREATE INDEX "model_providers_organization_id_id_idx" ON "model_providers" ("organization_id", "id") `);
    await queryRunner.query(`ALTER TABLE "model_providers" ADD CONSTRAINT "model_providers_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "model_providers" ADD CONSTRAINT "model_providers_api_key_record_id_fkey" FOREIGN KEY ("api_key_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "model_providers" DROP CONSTRAINT "model_providers_api_key_record_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "model_providers" DROP CONSTRAINT "model_providers_organization_id_fkey"`);
    await queryRunner.query(`DROP INDEX "public"."model_providers_organization_id_id_idx"`);
    await queryRunner.query(`DROP INDEX "public"."model_providers_organization_id_name_key"`);
    await queryRunner.query(`DROP TABLE "model_providers"`);
  }
}
