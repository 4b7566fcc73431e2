import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Vaults (issue 16, decision 029): Vaults, the members each grants `vaults.use` to, and items
 * whose field values live together in one sealed record. A model provider may name its API key
 * as a Vault reference `{ vaultItemId, field }` instead of a sealed literal.
 */
export class Vaults1766900000000 implements MigrationInterface {
  name = 'Vaults1766900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "vaults" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "vaults_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "vaults_organization_id_name_key" ON "vaults" ("organization_id", "name")`);
    await queryRunner.query(`CREATE INDEX "vaults_organization_id_id_idx" ON "vaults" ("organization_id", "id")`);
    await queryRunner.query(
      `ALTER TABLE "vaults" ADD CONSTRAINT "vaults_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`CREATE TABLE "vault_users" ("vault_id" uuid NOT NULL, "member_id" uuid NOT NULL, CONSTRAINT "vault_users_pkey" PRIMARY KEY ("vault_id", "member_id"))`);
    await queryRunner.query(
      `ALTER TABLE "vault_users" ADD CONSTRAINT "vault_users_vault_id_fkey" FOREIGN KEY ("vault_id") REFERENCES "vaults"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "vault_users" ADD CONSTRAINT "vault_users_member_id_fkey" FOREIGN KEY ("member_id") REFERENCES "members"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "vault_items" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "vault_id" uuid NOT NULL, "name" text NOT NULL, "field_names" jsonb NOT NULL, "allowed_hosts" jsonb NOT NULL, "fields_record_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "vault_items_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "vault_items_vault_id_name_key" ON "vault_items" ("vault_id", "name")`);
    await queryRunner.query(`CREATE INDEX "vault_items_organization_id_id_idx" ON "vault_items" ("organization_id", "id")`);
    await queryRunner.query(
      `ALTER TABLE "vault_items" ADD CONSTRAINT "vault_items_vault_id_fkey" FOREIGN KEY ("vault_id") REFERENCES "vaults"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "vault_items" ADD CONSTRAINT "vault_items_fields_record_id_fkey" FOREIGN KEY ("fields_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`ALTER TABLE "model_providers" ADD "api_key_reference" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "model_providers" DROP COLUMN "api_key_reference"`);
    await queryRunner.query(`DROP TABLE "vault_items"`);
    await queryRunner.query(`DROP TABLE "vault_users"`);
    await queryRunner.query(`DROP TABLE "vaults"`);
  }
}
