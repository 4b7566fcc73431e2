import type { MigrationInterface, QueryRunner } from 'typeorm';

/** SSO: per-organization OpenID Connect configurations, member identities, logins in flight and sessions. */
export class Sso1765600000000 implements MigrationInterface {
  name = 'Sso1765600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "member_identities" ("organization_id" uuid NOT NULL, "issuer" text NOT NULL, "subject" text NOT NULL, "member_id" uuid NOT NULL, "email" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "member_identities_pkey" PRIMARY KEY ("organization_id", "issuer", "subject"))`);
    await queryRunner.query(`CREATE INDEX "member_identities_member_id_idx" ON "member_identities"  ("member_id") `);
    await queryRunner.query(`CREATE TABLE "sessions" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "member_id" uuid NOT NULL, "token_hash" bytea NOT NULL, "csrf_token" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "sessions_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "sessions_member_id_idx" ON "sessions"  ("member_id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions"  ("token_hash") `);
    await queryRunner.query(`CREATE TABLE "sso_configurations" ("organization_id" uuid NOT NULL, "issuer" text NOT NULL, "client_id" text NOT NULL, "client_secret_record_id" uuid, "allowed_domains" jsonb NOT NULL, "default_role" text NOT NULL, "revision" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "deleted_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "sso_configurations_pkey" PRIMARY KEY ("organization_id"))`);
    await queryRunner.query(`CREATE TABLE "sso_logins" ("state_hash" bytea NOT NULL, "organization_id" uuid NOT NULL, "revision" integer NOT NULL, "browser_hash" bytea NOT NULL, "nonce" text NOT NULL, "code_verifier" text, "return_to" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "sso_logins_pkey" PRIMARY KEY ("state_hash"))`);
    await queryRunner.query(`CREATE INDEX "sso_logins_created_at_idx" ON "sso_logins"  ("created_at") `);
    await queryRunner.query(`ALTER TABLE "member_identities" ADD CONSTRAINT "member_identities_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "member_identities" ADD CONSTRAINT "member_identities_member_id_fkey" FOREIGN KEY ("member_id") REFERENCES "members"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD CONSTRAINT "sessions_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD CONSTRAINT "sessions_member_id_fkey" FOREIGN KEY ("member_id") REFERENCES "members"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "sso_configurations" ADD CONSTRAINT "sso_configurations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "sso_configurations" ADD CONSTRAINT "sso_configurations_client_secret_record_id_fkey" FOREIGN KEY ("client_secret_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "sso_logins" ADD CONSTRAINT "sso_logins_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sso_logins" DROP CONSTRAINT "sso_logins_organization_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "sso_configurations" DROP CONSTRAINT "sso_configurations_client_secret_record_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "sso_configurations" DROP CONSTRAINT "sso_configurations_organization_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP CONSTRAINT "sessions_member_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP CONSTRAINT "sessions_organization_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "member_identities" DROP CONSTRAINT "member_identities_member_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "member_identities" DROP CONSTRAINT "member_identities_organization_id_fkey"`);
    await queryRunner.query(`DROP INDEX "public"."sso_logins_created_at_idx"`);
    await queryRunner.query(`DROP TABLE "sso_logins"`);
    await queryRunner.query(`DROP TABLE "sso_configurations"`);
    await queryRunner.query(`DROP INDEX "public"."sessions_token_hash_key"`);
    await queryRunner.query(`DROP INDEX "public"."sessions_member_id_idx"`);
    await queryRunner.query(`DROP TABLE "sessions"`);
    await queryRunner.query(`DROP INDEX "public"."member_identities_member_id_idx"`);
    await queryRunner.query(`DROP TABLE "member_identities"`);
  }
}
