import { Conflict } from '@openbot/domain';

/** How many of the Bots using a provider a ModelProviderInUse names; `botCount` says how many there are. */
export const IN_USE_BOTS_SHOWN = 20;

/** A Bot that names a provider in its model, as ModelProviderInUse names it. */
export interface BotUsingProvider {
  readonly id: string;
  readonly name: string;
}

/**
 * 409: the provider is named by the models of these Bots of the organization, so deleting it
 * would fail their Turns. The caller changes or deletes those Bots first.
 */
export class ModelProviderInUse extends Conflict {
  constructor(provider: string, bots: readonly BotUsingProvider[], botCount: number) {
    super(
      'ModelProviderInUse',
      `The model provider "${provider}" is used by ${botCount === 1 ? '1 Bot' : `${botCount} Bots`}: change their model or delete them first.`,
      { bots: bots.map(({ id, name }) => ({ id, name })), botCount },
    );
  }
}
