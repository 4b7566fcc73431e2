import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid } from '@openbot/domain';
import { clientMetadataDocument, type ClientMetadataDocument } from '@openbot/protocol';
import { Database } from '../../../../platform/src/database/sql';
import { registrationNotFound } from '../app-oauth-failures';

/**
 * `GET /v1/oauth/{registrationId}/client-metadata.json` (public): the Client ID Metadata
 * Document of a registration made that way, which its authorization server fetches. It is built
 * from the saved registration — its `client_id` (this very URL) and its one redirect URI — so it
 * never changes for the registration's lifetime. Any other registration, or none, is NotFound.
 */
export class GetClientMetadataDocument extends Query<ClientMetadataDocument> {
  constructor(readonly registrationId: string) {
    super();
  }
}

@QueryHandler(GetClientMetadataDocument)
export class GetClientMetadataDocumentHandler implements IQueryHandler<GetClientMetadataDocument> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ registrationId }: GetClientMetadataDocument): Promise<ClientMetadataDocument> {
    if (!isUuid(registrationId)) throw registrationNotFound();
    const row = await this.db.one<{ client_id: string; redirect_uri: string }>(
      `SELECT client_id, redirect_uri FROM app_oauth_registrations WHERE id = $1 AND method = 'metadata_document'`,
      [registrationId],
    );
    if (row === undefined) throw registrationNotFound();
    return clientMetadataDocument({ documentUrl: row.client_id, redirectUri: row.redirect_uri, clientName: 'OpenBot', clientUri: new URL(row.client_id).origin });
  }
}
