import type { Queryable } from '@openbot/engine';

/** The safe detail of a failure an outside service answered (decision 082): a model provider's status, error code and scrubbed message. */
export interface FailureDetail {
  readonly status: number | null;
  readonly code: string | null;
  readonly message: string | null;
}

const DETAIL_OF = { name: 'errors.detail_of', text: 'SELECT detail FROM error_records WHERE id = $1' };

/** The detail an error record keeps in clear beside its category; null when its failure named none. */
export async function failureDetailOf(db: Queryable, errorId: string): Promise<FailureDetail | null> {
  const { rows } = await db.query<{ detail: Partial<FailureDetail> | null }>({ ...DETAIL_OF, values: [errorId] });
  const detail = rows[0]?.detail;
  if (detail === null || detail === undefined || typeof detail !== 'object') return null;
  return {
    status: typeof detail.status === 'number' ? detail.status : null,
    code: typeof detail.code === 'string' ? detail.code : null,
    message: typeof detail.message === 'string' ? detail.message : null,
  };
}
