import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who set each price version (issue 44, decision 072): `organization` (its own route),
 * `platform` (the administrator's route) or `default` (the operator's `OPENBOT_DEFAULT_PRICE`,
 * written when it first priced a call). Once an organization has credits only `platform` and
 * `default` versions price its calls. Existing rows: a version written after the organization's
 * credit account opened came from the administrator (the organization's route answered 403 then);
 * any earlier one counts as the organization's, as nothing recorded who set it.
 */
export class PriceSetBy1767840000000 implements MigrationInterface {
  name = 'PriceSetBy1767840000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "prices" ADD "set_by" text NOT NULL DEFAULT 'organization'`);
    await queryRunner.query(
      `UPDATE "prices" p SET "set_by" = 'platform' FROM "credit_accounts" a WHERE a."organization_id" = p."organization_id" AND p."created_at" >= a."created_at"`,
    );
    await queryRunner.query(`ALTER TABLE "prices" ALTER COLUMN "set_by" DROP DEFAULT`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "prices" DROP COLUMN "set_by"`);
  }
}
