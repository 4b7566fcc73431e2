import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * App OAuth Client ID Metadata Documents (issue 18, decision 043): a registration OpenBot makes
 * itself, dynamic (RFC 7591) or by metadata document, is made once per issuer. The partial unique
 * index that held only dynamic registrations now holds both ways, so a race between two nodes
 * loses quietly either way and everyone uses the winner's.
 */
export class AppOAuthMetadataDocuments1767710000000 implements MigrationInterface {
  name = 'AppOAuthMetadataDocuments1767710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."app_oauth_registrations_dynamic_issuer_key"`);
    await queryRunner.query(`CREATE UNIQUE INDEX "app_oauth_registrations_made_issuer_key" ON "app_oauth_registrations" ("issuer") WHERE method IN ('dynamic', 'metadata_document')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."app_oauth_registrations_made_issuer_key"`);
    await queryRunner.query(`CREATE UNIQUE INDEX "app_oauth_registrations_dynamic_issuer_key" ON "app_oauth_registrations" ("issuer") WHERE method = 'dynamic'`);
  }
}
