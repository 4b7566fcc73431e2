import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * App proofs and the App index (issue 18, decision 039). `app_proofs`: a developer's claim to an
 * App's domain, with the challenge token served at `/.well-known/openbot-app-proof`, pending until
 * verified or failed. `app_index_entries`: what the last crawl of an App read (card fields, tool
 * names, whether it needs authorization). Both go with their App; an entry is shown only while its
 * App has a verified proof (MIG-04).
 */
export class AppProofsAndIndex1767550000000 implements MigrationInterface {
  name = 'AppProofsAndIndex1767550000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "app_proofs" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "app_id" uuid NOT NULL, "domain" text NOT NULL, "token" text NOT NULL, "state" text NOT NULL, "verified_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "app_proofs_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "app_proofs_app_id_idx" ON "app_proofs" ("app_id")`);
    await queryRunner.query(
      `ALTER TABLE "app_proofs" ADD CONSTRAINT "app_proofs_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "app_index_entries" ("app_id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" text NOT NULL, "title" text, "description" text, "tools" jsonb NOT NULL, "needs_authorization" boolean NOT NULL, "indexed_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "app_index_entries_pkey" PRIMARY KEY ("app_id"))`,
    );
    await queryRunner.query(`CREATE INDEX "app_index_entries_organization_id_idx" ON "app_index_entries" ("organization_id")`);
    await queryRunner.query(
      `ALTER TABLE "app_index_entries" ADD CONSTRAINT "app_index_entries_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "app_index_entries"`);
    await queryRunner.query(`DROP TABLE "app_proofs"`);
  }
}
