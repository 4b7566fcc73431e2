/**
 * A limit check that could not read what it needs (DLG-01): the saved usage, the holds, a budget,
 * the credits, or the saved limits of the execution or an ancestor. The call is not sent: there
 * is no older sum to fall back on and no default for a missing limit. A model call tries the
 * check again as a new attempt (each reads anew: a passing database fault costs a moment); once
 * its attempts are used up the workflow decides what stops (a Turn is left paused for recovery).
 */
export class LimitsUnreadable extends Error {
  constructor(what: string, options?: { readonly cause?: unknown }) {
    super(`the limit check could not read ${what}`, options);
  }
}
