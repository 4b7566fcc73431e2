import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dead-node detection (docs/decisions/026-dead-node-detection.md): every node looks several times
 * a second for leased executions of absent owners, and a graceful stop hands back its own leases.
 * Both read leased rows by owner; this index holds only rows with a lease (ended, waiting and
 * queued-without-owner rows have none), so it stays as small as the work in flight.
 */
export class LeasedOwnerIndex1766600000000 implements MigrationInterface {
  name = 'LeasedOwnerIndex1766600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "executions_leased_owner_idx" ON "executions" ("owner_node") WHERE lease_until IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."executions_leased_owner_idx"`);
  }
}
