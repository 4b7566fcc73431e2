import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Apps over MCP (issue 17, decision 031). `apps`: an App registered from its Server Card or a bare
 * Streamable HTTP URL, the card read once. `app_connections`: one prepared connection of the
 * organization or of one member (GRANT-06), with its revision and grant generation (CONN-01);
 * literal header and variable values live sealed in `sealed_records`. `app_connection_tools`: full
 * discovery cached per connection and revision (STC-12). `app_connection_scopes`: the physical
 * scopes (open MCP sessions) of a connection on a node, each with its lease and stored close
 * result (RES-06, RES-07).
 */
export class AppsAndConnections1767100000000 implements MigrationInterface {
  name = 'AppsAndConnections1767100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "apps" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "url" text NOT NULL, "name" text NOT NULL, "title" text, "description" text, "version" text, "card" boolean NOT NULL, "remotes" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "apps_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "apps_organization_id_id_idx" ON "apps" ("organization_id", "id")`);
    await queryRunner.query(
      `ALTER TABLE "apps" ADD CONSTRAINT "apps_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "app_connections" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "app_id" uuid NOT NULL, "owner" text NOT NULL, "member_id" uuid, "remote" text NOT NULL, "prepared_remote" jsonb NOT NULL, "variables" jsonb NOT NULL, "headers" jsonb NOT NULL, "secrets_record_id" uuid, "state" text NOT NULL, "revision" integer NOT NULL DEFAULT 1, "generation" integer NOT NULL DEFAULT 1, "era" text, "protocol_version" text, "warnings" jsonb NOT NULL DEFAULT '[]', "category" text, "error_id" text, "deleting_at" TIMESTAMP WITH TIME ZONE, "checked_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_connections_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "app_connections_organization_id_id_idx" ON "app_connections" ("organization_id", "id")`);
    await queryRunner.query(`CREATE INDEX "app_connections_app_id_idx" ON "app_connections" ("app_id")`);
    await queryRunner.query(
      `ALTER TABLE "app_connections" ADD CONSTRAINT "app_connections_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "app_connections" ADD CONSTRAINT "app_connections_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "app_connections" ADD CONSTRAINT "app_connections_member_id_fkey" FOREIGN KEY ("member_id") REFERENCES "members"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "app_connections" ADD CONSTRAINT "app_connections_secrets_record_id_fkey" FOREIGN KEY ("secrets_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "app_connection_tools" ("connection_id" uuid NOT NULL, "revision" integer NOT NULL, "tools" jsonb NOT NULL, "refused" jsonb NOT NULL, "cut_at" integer, "listed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_connection_tools_pkey" PRIMARY KEY ("connection_id", "revision"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "app_connection_tools" ADD CONSTRAINT "app_connection_tools_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "app_connections"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "app_connection_scopes" ("id" uuid NOT NULL, "connection_id" uuid NOT NULL, "node_id" text NOT NULL, "execution_id" uuid, "url" text NOT NULL, "era" text NOT NULL, "session_id" text, "lease_until" TIMESTAMP WITH TIME ZONE NOT NULL, "opened_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "closed_at" TIMESTAMP WITH TIME ZONE, "close_result" jsonb, CONSTRAINT "app_connection_scopes_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "app_connection_scopes_connection_id_idx" ON "app_connection_scopes" ("connection_id")`);
    await queryRunner.query(
      `ALTER TABLE "app_connection_scopes" ADD CONSTRAINT "app_connection_scopes_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "app_connections"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "app_connection_scopes"`);
    await queryRunner.query(`DROP TABLE "app_connection_tools"`);
    await queryRunner.query(`DROP TABLE "app_connections"`);
    await queryRunner.query(`DROP TABLE "apps"`);
  }
}
