import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * App OAuth sign-ins bound to their member (issue 44, decision 066) and cleanup by grant lineage.
 * An authorization request is bound before its browser leg: `binding` is `browser` (the initiating
 * member's signed-in browser opened the start URL; `browser_hash` is the SHA-256 of its binding
 * cookie) or `loopback` (`loopback_redirect`, the listener on the member's machine the callback
 * relays to; the member posts the code with their key). The authorization server's URL is sealed
 * (`request_record_id`) and shown only to the member who binds it. A grant result and a holder
 * row name their lineage (`lineage_id`: the connection or developer test that obtained the pair);
 * cleanup waits only for holders of the same lineage (GRANT-04).
 */
export class AppOAuthBoundSignIns1767800000000 implements MigrationInterface {
  name = 'AppOAuthBoundSignIns1767800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" ADD "binding" text, ADD "browser_hash" bytea, ADD "loopback_redirect" text, ADD "request_record_id" uuid`);
    await queryRunner.query(
      `ALTER TABLE "app_oauth_authorizations" ADD CONSTRAINT "app_oauth_authorizations_request_record_id_fkey" FOREIGN KEY ("request_record_id") REFERENCES "sealed_records"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`ALTER TABLE "app_oauth_grant_results" ADD "lineage_id" uuid`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grant_uses" ADD "lineage_id" uuid`);
    await queryRunner.query(`CREATE INDEX "app_oauth_grant_uses_lineage_id_idx" ON "app_oauth_grant_uses"("lineage_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."app_oauth_grant_uses_lineage_id_idx"`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grant_uses" DROP COLUMN "lineage_id"`);
    await queryRunner.query(`ALTER TABLE "app_oauth_grant_results" DROP COLUMN "lineage_id"`);
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" DROP CONSTRAINT "app_oauth_authorizations_request_record_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "app_oauth_authorizations" DROP COLUMN "request_record_id", DROP COLUMN "loopback_redirect", DROP COLUMN "browser_hash", DROP COLUMN "binding"`);
  }
}
