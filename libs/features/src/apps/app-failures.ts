import { Conflict, InvalidInput, NotFound, Unavailable } from '@openbot/domain';
import type { McpFailure } from '@openbot/protocol';

export const appNotFound = (): NotFound => new NotFound('App');
export const connectionNotFound = (): NotFound => new NotFound('Connection');

/** 409 while an App still has connections (they must be deleted first). */
export class AppHasConnections extends Conflict {
  constructor() {
    super('AppHasConnections', 'The App still has connections; delete them first.');
  }
}

/** 409 when the organization already registered this URL; `appId` names the existing App. */
export class AppExists extends Conflict {
  constructor(appId: string) {
    super('AppExists', `An App with this URL is already registered: ${appId}.`, { appId });
  }
}

/** An App URL that could not be read as a card or an endpoint: a 400 on `url` with the safe reason. */
export function unreadableAppUrl(failure: McpFailure): InvalidInput {
  return new InvalidInput([{ path: 'url', message: `url ${failure.reason === 'refused' ? 'is refused: ' : 'could not be registered: '}${failure.message}` }]);
}

/**
 * The App's server could not be listed or probed during a request: a 503 with an error ID; the
 * McpFailure (never the server's own text in the message) is the sealed cause.
 */
export class AppServerUnavailable extends Unavailable {
  constructor(failure: McpFailure) {
    super(`The App's server could not be reached: ${failure.message}.`);
    Object.defineProperty(this, 'cause', { value: failure, enumerable: false });
  }
}
