import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Roles with a read-only viewer, member removal, API key scopes, the audit log and ServiceIdentities. */
export class Access1765500000000 implements MigrationInterface {
  name = 'Access1765500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "audit_events" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "actor_kind" text NOT NULL, "actor_id" uuid, "action" text NOT NULL, "target_type" text NOT NULL, "target_id" text NOT NULL, "details" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "audit_events_organization_id_id_idx" ON "audit_events"  ("organization_id", "id") `);
    await queryRunner.query(`CREATE TABLE "services" ("id" uuid NOT NULL, "organization_id" uuid, "name" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "disabled_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "services_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`ALTER TABLE "members" ADD "name" text`);
    await queryRunner.query(`ALTER TABLE "members" ADD "email" text`);
    await queryRunner.query(`ALTER TABLE "members" ADD "removed_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "scopes" jsonb`);
    await queryRunner.query(`ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "services" ADD CONSTRAINT "services_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "services" DROP CONSTRAINT "services_organization_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_organization_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "scopes"`);
    await queryRunner.query(`ALTER TABLE "members" DROP COLUMN "removed_at"`);
    await queryRunner.query(`ALTER TABLE "members" DROP COLUMN "email"`);
    await queryRunner.query(`ALTER TABLE "members" DROP COLUMN "name"`);
    await queryRunner.query(`DROP TABLE "services"`);
    await queryRunner.query(`DROP INDEX "public"."audit_events_organization_id_id_idx"`);
    await queryRunner.query(`DROP TABLE "audit_events"`);
  }
}
