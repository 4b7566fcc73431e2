import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A failed close keeps its error ID (RES-06, issue 46): `app_connection_scopes.close_error_id`
 * names the sealed error record of the owner's last failed close. The scope stays open (no
 * `close_result`) for the connection's cleanup, and the ID stays readable after the owner stops.
 */
export class ScopeCloseErrors1767930000000 implements MigrationInterface {
  name = 'ScopeCloseErrors1767930000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_connection_scopes" ADD "close_error_id" uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_connection_scopes" DROP COLUMN "close_error_id"`);
  }
}
