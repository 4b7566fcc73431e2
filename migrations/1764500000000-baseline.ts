import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The baseline schema: organizations, members, API keys, sealed records and error records.
 * It never changes (MIG-01): every later schema change is a new migration.
 */
export class Baseline1764500000000 implements MigrationInterface {
  name = 'Baseline1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "organizations" ("id" uuid NOT NULL, "name" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "organizations_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE TABLE "members" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "role" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "members_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "members_organization_id_idx" ON "members" ("organization_id")`);
    await queryRunner.query(`CREATE TABLE "api_keys" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "member_id" uuid NOT NULL, "name" text NOT NULL, "secret_hash" bytea NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE, "last_used_at" TIMESTAMP WITH TIME ZONE, "revoked_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "api_keys_member_id_idx" ON "api_keys" ("member_id")`);
    await queryRunner.query(`CREATE INDEX "api_keys_organization_id_id_idx" ON "api_keys" ("organization_id", "id")`);
    await queryRunner.query(`CREATE TABLE "sealed_records" ("id" uuid NOT NULL, "purpose" text NOT NULL, "key_id" text NOT NULL, "data" bytea NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "sealed_records_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE TABLE "error_records" ("id" uuid NOT NULL, "category" text NOT NULL, "origin" text NOT NULL, "cause_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "error_records_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "error_records_cause_id_idx" ON "error_records" ("cause_id")`);
    await queryRunner.query(`ALTER TABLE "members" ADD CONSTRAINT "members_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_member_id_fkey" FOREIGN KEY ("member_id") REFERENCES "members"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "error_records" ADD CONSTRAINT "error_records_cause_id_fkey" FOREIGN KEY ("cause_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "error_records" DROP CONSTRAINT "error_records_cause_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_member_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_organization_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "members" DROP CONSTRAINT "members_organization_id_fkey"`);
    await queryRunner.query(`DROP INDEX "public"."error_records_cause_id_idx"`);
    await queryRunner.query(`DROP TABLE "error_records"`);
    await queryRunner.query(`DROP TABLE "sealed_records"`);
    await queryRunner.query(`DROP INDEX "public"."api_keys_organization_id_id_idx"`);
    await queryRunner.query(`DROP INDEX "public"."api_keys_member_id_idx"`);
    await queryRunner.query(`DROP TABLE "api_keys"`);
    await queryRunner.query(`DROP INDEX "public"."members_organization_id_idx"`);
    await queryRunner.query(`DROP TABLE "members"`);
    await queryRunner.query(`DROP TABLE "organizations"`);
  }
}
