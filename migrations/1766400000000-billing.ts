import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Billing (docs/decisions/024-billing-ledger-and-reservations.md): versioned prices, the credits
 * ledger and its account row, budgets, the price and cost of each usage record, and what each
 * hold reserves (money and tokens) for the budgets and credits it counts against.
 */
export class Billing1766400000000 implements MigrationInterface {
  name = 'Billing1766400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "budgets" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "scope_kind" text NOT NULL, "scope_id" uuid, "period" text NOT NULL, "limit_micros" bigint, "limit_tokens" bigint, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "budgets_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "budgets_organization_id_id_idx" ON "budgets" ("organization_id", "id")`);
    await queryRunner.query(`CREATE TABLE "credit_accounts" ("organization_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "credit_accounts_pkey" PRIMARY KEY ("organization_id"))`);
    await queryRunner.query(`CREATE TABLE "credit_entries" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "amount_micros" bigint NOT NULL, "kind" text NOT NULL, "reason" text NOT NULL, "usage_record_id" uuid, "command_key" text, "input_hash" bytea, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "credit_entries_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "credit_entries_organization_id_command_key_key" ON "credit_entries" ("organization_id", "command_key")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "credit_entries_usage_record_id_key" ON "credit_entries" ("usage_record_id")`);
    await queryRunner.query(`CREATE INDEX "credit_entries_organization_id_id_idx" ON "credit_entries" ("organization_id", "id")`);
    await queryRunner.query(`CREATE TABLE "prices" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "model" text NOT NULL, "input_per_million_micros" bigint NOT NULL, "output_per_million_micros" bigint NOT NULL, "cached_input_per_million_micros" bigint NOT NULL, "effective_from" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "prices_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "prices_organization_id_id_idx" ON "prices" ("organization_id", "id")`);
    await queryRunner.query(`CREATE INDEX "prices_organization_id_model_effective_from_idx" ON "prices" ("organization_id", "model", "effective_from")`);
    await queryRunner.query(`ALTER TABLE "usage_holds" ADD "scope_kind" text`);
    await queryRunner.query(`ALTER TABLE "usage_holds" ADD "scope_id" uuid`);
    await queryRunner.query(`ALTER TABLE "usage_holds" ADD "bot_id" uuid`);
    await queryRunner.query(`ALTER TABLE "usage_holds" ADD "price_id" uuid`);
    await queryRunner.query(`ALTER TABLE "usage_holds" ADD "reserved_micros" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "usage_holds" ADD "reserved_tokens" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "cached_input_tokens" integer`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "price_id" uuid`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "cost_micros" bigint`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "reserved_micros" bigint`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "reserved_tokens" bigint`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "released_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`CREATE INDEX "usage_records_organization_id_created_at_idx" ON "usage_records" ("organization_id", "created_at")`);
    await queryRunner.query(`ALTER TABLE "budgets" ADD CONSTRAINT "budgets_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "credit_accounts" ADD CONSTRAINT "credit_accounts_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "credit_entries" ADD CONSTRAINT "credit_entries_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "prices" ADD CONSTRAINT "prices_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`CREATE TABLE "rate_limits" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "scope_kind" text NOT NULL, "scope_id" uuid, "requests_per_minute" integer, "tokens_per_minute" integer, "requests_available" double precision, "tokens_available" double precision, "refilled_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "rate_limits_organization_id_id_idx" ON "rate_limits" ("organization_id", "id")`);
    await queryRunner.query(`ALTER TABLE "rate_limits" ADD CONSTRAINT "rate_limits_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "rate_limits"`);
    await queryRunner.query(`DROP INDEX "public"."usage_records_organization_id_created_at_idx"`);
    for (const column of ['released_at', 'reserved_tokens', 'reserved_micros', 'cost_micros', 'price_id', 'cached_input_tokens']) {
      await queryRunner.query(`ALTER TABLE "usage_records" DROP COLUMN "${column}"`);
    }
    for (const column of ['reserved_tokens', 'reserved_micros', 'price_id', 'bot_id', 'scope_id', 'scope_kind']) {
      await queryRunner.query(`ALTER TABLE "usage_holds" DROP COLUMN "${column}"`);
    }
    await queryRunner.query(`DROP TABLE "prices"`);
    await queryRunner.query(`DROP TABLE "credit_entries"`);
    await queryRunner.query(`DROP TABLE "credit_accounts"`);
    await queryRunner.query(`DROP TABLE "budgets"`);
  }
}
