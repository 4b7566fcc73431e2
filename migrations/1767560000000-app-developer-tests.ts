import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Developer tests of Apps (issue 18, DEVT-01, decision 039). `app_developer_tests`: one
 * pre-publish connection run of an App, with its original caller and its execution ID stored by
 * the command that started it, and the outcome (connection state, tool names) its end wrote.
 */
export class AppDeveloperTests1767560000000 implements MigrationInterface {
  name = 'AppDeveloperTests1767560000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "app_developer_tests" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "app_id" uuid NOT NULL, "member_id" uuid NOT NULL, "execution_id" uuid NOT NULL, "remote" text NOT NULL, "state" text NOT NULL, "connection" jsonb, "tools" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_developer_tests_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "app_developer_tests_app_id_idx" ON "app_developer_tests" ("app_id")`);
    await queryRunner.query(
      `ALTER TABLE "app_developer_tests" ADD CONSTRAINT "app_developer_tests_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "app_developer_tests"`);
  }
}
