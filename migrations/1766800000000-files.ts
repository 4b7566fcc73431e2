import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Files (issue 16, decision 028): metadata here, bytes in the object store under `object_key`.
 * A row is `uploading` until its upload commits; its guard execution removes what never did.
 */
export class Files1766800000000 implements MigrationInterface {
  name = 'Files1766800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "files" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "created_by" uuid NOT NULL, "name" text NOT NULL, "content_type" text NOT NULL, "bytes" bigint, "sha256" text, "object_key" text NOT NULL, "state" text NOT NULL DEFAULT 'uploading', "upload_deadline" TIMESTAMP WITH TIME ZONE NOT NULL, "guard_execution_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "files_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "files_organization_id_id_idx" ON "files" ("organization_id", "id")`);
    await queryRunner.query(
      `ALTER TABLE "files" ADD CONSTRAINT "files_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "files"`);
  }
}
