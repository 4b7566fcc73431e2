import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Developer tests with values and the developer's own grant (issue 18, DEVT-01, decision 044).
 * `app_developer_tests` keeps the prepared remote, its values as stored (literals as null, Vault
 * references as given) and the sealed record of the literals, and the authorization URL of a
 * test that waits for its developer to sign in. An authorization request and a grant belong to
 * a connection or, now, to a developer test (`developer_test_id`, one grant per test).
 */
export class DeveloperTestGrants1767720000000 implements MigrationInterface {
  name = 'DeveloperTestGrants1767720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "app_developer_tests" ADD "prepared_remote" jsonb, ADD "variables" jsonb NOT NULL DEFAULT '{}', ADD "headers" jsonb NOT NULL DEFAULT '{}', ADD "secrets_record_id" uuid, ADD "authorization_url" text`,
    );
    await queryRunner.query(
      `ALTER TABLE "app_developer_tests" ADD CONSTRAINT "app_developer_tests_secrets_record_id_fkey" FOREIGN KEY ("secrets_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" ALTER COLUMN "connection_id" DROP NOT NULL, ADD "developer_test_id" uuid`);
    await queryRunner.query(`CREATE INDEX "app_oauth_authorizations_developer_test_id_idx" ON "app_oauth_authorizations"("developer_test_id")`);
    await queryRunner.query(
      `ALTER TABLE "app_oauth_authorizations" ADD CONSTRAINT "app_oauth_authorizations_developer_test_id_fkey" FOREIGN KEY ("developer_test_id") REFERENCES "app_developer_tests"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`ALTER TABLE "app_oauth_grants" ALTER COLUMN "connection_id" DROP NOT NULL, ADD "developer_test_id" uuid`);
    await queryRunner.query(`CREATE UNIQUE INDEX "app_oauth_grants_developer_test_id_key" ON "app_oauth_grants"("developer_test_id")`);
    await queryRunner.query(
      `ALTER TABLE "app_oauth_grants" ADD CONSTRAINT "app_oauth_grants_developer_test_id_fkey" FOREIGN KEY ("developer_test_id") REFERENCES "app_developer_tests"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_oauth_grants" DROP CONSTRAINT "app_oauth_grants_developer_test_id_fkey"`);
    await queryRunner.query(`DROP INDEX "app_oauth_grants_developer_test_id_key"`);
    await queryRunner.query(`DELETE FROM "app_oauth_grants" WHERE "connection_id" IS NULL`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grants" DROP COLUMN "developer_test_id", ALTER COLUMN "connection_id" SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" DROP CONSTRAINT "app_oauth_authorizations_developer_test_id_fkey"`);
    await queryRunner.query(`DROP INDEX "app_oauth_authorizations_developer_test_id_idx"`);
    await queryRunner.query(`DELETE FROM "app_oauth_authorizations" WHERE "connection_id" IS NULL`);
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" DROP COLUMN "developer_test_id", ALTER COLUMN "connection_id" SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE "app_developer_tests" DROP CONSTRAINT "app_developer_tests_secrets_record_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "app_developer_tests" DROP COLUMN "authorization_url", DROP COLUMN "secrets_record_id", DROP COLUMN "headers", DROP COLUMN "variables", DROP COLUMN "prepared_remote"`);
  }
}
