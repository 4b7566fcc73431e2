import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * App OAuth (issue 18, decision 038). `app_oauth_registrations`: one OAuth client per issuer and
 * client, with its own callback URI. `app_oauth_authorizations`: authorization requests, once
 * each, for 10 minutes. `app_oauth_grants`: the grant a connection holds (sealed token pair,
 * compare-and-swap version, refresh intent). `app_oauth_grant_results`: every pair an exchange or
 * refresh obtained, or a replacement or removal set aside, with its cleanup (GRANT-01..03).
 * `app_oauth_grant_uses`: holders, pending sends and revocation intents per grant scope (GRANT-05).
 */
export class AppOAuth1767500000000 implements MigrationInterface {
  name = 'AppOAuth1767500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "app_oauth_registrations" ("id" uuid NOT NULL, "issuer" text NOT NULL, "client_id" text NOT NULL, "method" text NOT NULL, "client_record_id" uuid NOT NULL, "metadata" jsonb NOT NULL, "redirect_uri" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_oauth_registrations_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "app_oauth_registrations_dynamic_issuer_key" ON "app_oauth_registrations"("issuer") WHERE method = 'dynamic'`);
    await queryRunner.query(`CREATE UNIQUE INDEX "app_oauth_registrations_issuer_client_id_key" ON "app_oauth_registrations"("issuer", "client_id")`);
    await queryRunner.query(`CREATE TABLE "app_oauth_authorizations" ("id" uuid NOT NULL, "registration_id" uuid NOT NULL, "connection_id" uuid NOT NULL, "organization_id" uuid NOT NULL, "member_id" uuid NOT NULL, "state_hash" bytea NOT NULL, "verifier_record_id" uuid NOT NULL, "resource" text NOT NULL, "scope" text, "return_to" text, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP WITH TIME ZONE, "exchange_execution_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_oauth_authorizations_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "app_oauth_authorizations_connection_id_idx" ON "app_oauth_authorizations"("connection_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "app_oauth_authorizations_state_hash_key" ON "app_oauth_authorizations"("state_hash")`);
    await queryRunner.query(`CREATE TABLE "app_oauth_grant_results" ("id" uuid NOT NULL, "call_id" text NOT NULL, "kind" text NOT NULL, "source_execution_id" uuid, "organization_id" uuid NOT NULL, "registration_id" uuid NOT NULL, "tokens_record_id" uuid, "cleanup_execution_id" uuid, "installed_at" TIMESTAMP WITH TIME ZONE, "revocation" jsonb, "cleaned_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_oauth_grant_results_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "app_oauth_grant_results_source_execution_id_idx" ON "app_oauth_grant_results"("source_execution_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "app_oauth_grant_results_call_id_key" ON "app_oauth_grant_results"("call_id")`);
    await queryRunner.query(`CREATE TABLE "app_oauth_grant_uses" ("id" uuid NOT NULL, "registration_id" uuid NOT NULL, "kind" text NOT NULL, "holder_type" text NOT NULL, "holder_id" uuid NOT NULL, "organization_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_oauth_grant_uses_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "app_oauth_grant_uses_registration_id_kind_idx" ON "app_oauth_grant_uses"("registration_id", "kind")`);
    await queryRunner.query(`CREATE TABLE "app_oauth_grants" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "registration_id" uuid NOT NULL, "connection_id" uuid NOT NULL, "state" text NOT NULL, "tokens_record_id" uuid NOT NULL, "version" integer NOT NULL DEFAULT '1', "resource" text NOT NULL, "scope" text, "expires_at" TIMESTAMP WITH TIME ZONE, "refresh_intent" uuid, "refresh_intent_at" TIMESTAMP WITH TIME ZONE, "step_up_scope" text, "step_ups" integer NOT NULL DEFAULT '0', "installed_call_id" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_oauth_grants_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "app_oauth_grants_registration_id_idx" ON "app_oauth_grants"("registration_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "app_oauth_grants_connection_id_key" ON "app_oauth_grants"("connection_id")`);
    await queryRunner.query(`ALTER TABLE "app_oauth_registrations" ADD CONSTRAINT "app_oauth_registrations_client_record_id_fkey" FOREIGN KEY ("client_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" ADD CONSTRAINT "app_oauth_authorizations_registration_id_fkey" FOREIGN KEY ("registration_id") REFERENCES "app_oauth_registrations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" ADD CONSTRAINT "app_oauth_authorizations_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "app_connections"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" ADD CONSTRAINT "app_oauth_authorizations_verifier_record_id_fkey" FOREIGN KEY ("verifier_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grant_results" ADD CONSTRAINT "app_oauth_grant_results_registration_id_fkey" FOREIGN KEY ("registration_id") REFERENCES "app_oauth_registrations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grant_uses" ADD CONSTRAINT "app_oauth_grant_uses_registration_id_fkey" FOREIGN KEY ("registration_id") REFERENCES "app_oauth_registrations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grants" ADD CONSTRAINT "app_oauth_grants_registration_id_fkey" FOREIGN KEY ("registration_id") REFERENCES "app_oauth_registrations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grants" ADD CONSTRAINT "app_oauth_grants_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "app_connections"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grants" ADD CONSTRAINT "app_oauth_grants_tokens_record_id_fkey" FOREIGN KEY ("tokens_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "app_oauth_grant_uses"`);
    await queryRunner.query(`DROP TABLE "app_oauth_grant_results"`);
    await queryRunner.query(`DROP TABLE "app_oauth_grants"`);
    await queryRunner.query(`DROP TABLE "app_oauth_authorizations"`);
    await queryRunner.query(`DROP TABLE "app_oauth_registrations"`);
  }
}
