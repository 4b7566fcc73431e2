import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who may decide an approval (issue 44, decision 075). Each approval keeps, from its tool's policy
 * in the Turn's Bot snapshot, the roles and members it names besides the defaults and whether it
 * asks for a second person, and the rights the Turn runs with (its identity's permissions), so the
 * inbox and the decision apply one rule in SQL. Rows written before keep NULL rights: the rule then
 * takes the Turn member's current role.
 */
export class ApprovalApprovers1767860000000 implements MigrationInterface {
  name = 'ApprovalApprovers1767860000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "approvals" ADD "approver_roles" text array NOT NULL DEFAULT '{}', ADD "approver_member_ids" uuid array NOT NULL DEFAULT '{}', ADD "second_person" boolean NOT NULL DEFAULT false, ADD "turn_permissions" text array`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "approvals" DROP COLUMN "turn_permissions", DROP COLUMN "second_person", DROP COLUMN "approver_member_ids", DROP COLUMN "approver_roles"`);
  }
}
