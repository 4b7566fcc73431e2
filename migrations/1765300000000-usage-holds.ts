import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Usage holds: the estimate each model call attempt reserves until the call ends (USE-03). */
export class UsageHolds1765300000000 implements MigrationInterface {
  name = 'UsageHolds1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "usage_holds" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "execution_id" uuid NOT NULL, "call_key" text NOT NULL, "attempt" integer NOT NULL, "estimated_input_tokens" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "released_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "usage_holds_pkey" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "usage_holds_organization_id_open_idx" ON "usage_holds" ("organization_id") WHERE "released_at" IS NULL`);
    await queryRunner.query(`CREATE UNIQUE INDEX "usage_holds_execution_id_call_key_attempt_key" ON "usage_holds" ("execution_id", "call_key", "attempt")`);
    await queryRunner.query(`ALTER TABLE "usage_holds" ADD CONSTRAINT "usage_holds_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "usage_holds" DROP CONSTRAINT "usage_holds_organization_id_fkey"`);
    await queryRunner.query(`DROP INDEX "public"."usage_holds_execution_id_call_key_attempt_key"`);
    await queryRunner.query(`DROP INDEX "public"."usage_holds_organization_id_open_idx"`);
    await queryRunner.query(`DROP TABLE "usage_holds"`);
  }
}
