import { Module } from '@nestjs/common';
import { AuthenticateApiKeyHandler } from './commands/authenticate-api-key.command';
import { CreateApiKeyHandler } from './commands/create-api-key.command';
import { RevokeApiKeyHandler } from './commands/revoke-api-key.command';
import { ListApiKeysHandler } from './queries/list-api-keys.query';

@Module({ providers: [AuthenticateApiKeyHandler, CreateApiKeyHandler, RevokeApiKeyHandler, ListApiKeysHandler] })
export class ApiKeysModule {}
