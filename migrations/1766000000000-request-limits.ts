import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Shared rate-limit windows and open event-stream slots, so limits hold across nodes (docs/decisions/017). */
export class RequestLimits1766000000000 implements MigrationInterface {
  name = 'RequestLimits1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "rate_limit_windows" ("bucket" text NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL, "hits" integer NOT NULL, CONSTRAINT "rate_limit_windows_pkey" PRIMARY KEY ("bucket"))`);
    await queryRunner.query(`CREATE INDEX "rate_limit_windows_started_at_idx" ON "rate_limit_windows" ("started_at") `);
    await queryRunner.query(`CREATE TABLE "event_stream_slots" ("credential" text NOT NULL, "slot" integer NOT NULL, "holder" uuid NOT NULL, "node_id" text NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "event_stream_slots_pkey" PRIMARY KEY ("credential", "slot"))`);
    await queryRunner.query(`CREATE INDEX "event_stream_slots_expires_at_idx" ON "event_stream_slots" ("expires_at") `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "event_stream_slots"`);
    await queryRunner.query(`DROP TABLE "rate_limit_windows"`);
  }
}
