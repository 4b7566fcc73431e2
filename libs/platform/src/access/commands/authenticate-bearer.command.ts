import { Inject } from '@nestjs/common';
import { Command, CommandBus, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Caller } from '@openbot/domain';
import { tokensEqual } from '../../identity/api-key-secret';
import { AuthenticateApiKey } from '../../api-keys/commands/authenticate-api-key.command';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';

/** A bearer secret is the platform admin token or an organization API key. */
export class AuthenticateBearer extends Command<Caller> {
  constructor(readonly secret: string) {
    super();
  }
}

@CommandHandler(AuthenticateBearer)
export class AuthenticateBearerHandler implements ICommandHandler<AuthenticateBearer> {
  constructor(
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
    @Inject(CommandBus) private readonly commands: CommandBus,
  ) {}

  async execute({ secret }: AuthenticateBearer): Promise<Caller> {
    const admin = this.config.adminToken;
    if (admin !== null && tokensEqual(secret, admin)) return { kind: 'platform-admin' };
    return this.commands.execute(new AuthenticateApiKey(secret));
  }
}
