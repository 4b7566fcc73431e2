/**
 * The engine's leaf types: every other engine module may import these, and this module imports
 * nothing, so no import cycle can run through them.
 */

/** JSON values only: workflow state is sealed and stored as JSON at every checkpoint. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What an execution works on (a Chat, a Bot, ...): the feature's own type and ID. */
export interface ResourceRef {
  readonly type: string;
  readonly id: string;
}
