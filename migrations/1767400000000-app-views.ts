import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Views of App tools (issue 17, decision 037). `app_views`: a View (an MCP Apps `ui://` resource)
 * a member opened for one tool of a connection, with the declarations of the connection's tools
 * at that revision; its tool calls send those (STC-12). Stored, so a View stays valid across
 * instance restarts and on every node (FW-05); it goes with its connection.
 */
export class AppViews1767400000000 implements MigrationInterface {
  name = 'AppViews1767400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "app_views" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "member_id" uuid NOT NULL, "connection_id" uuid NOT NULL, "tool_name" text NOT NULL, "uri" text NOT NULL, "revision" integer NOT NULL, "declarations" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_views_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "app_views_organization_id_id_idx" ON "app_views" ("organization_id", "id")`);
    await queryRunner.query(`CREATE INDEX "app_views_connection_id_idx" ON "app_views" ("connection_id")`);
    await queryRunner.query(
      `ALTER TABLE "app_views" ADD CONSTRAINT "app_views_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "app_connections"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "app_views"`);
  }
}
