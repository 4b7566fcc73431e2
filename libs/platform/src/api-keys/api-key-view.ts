import type { ApiKeyId, MemberId } from '@openbot/domain';

/** What the API may show of a key: never its hash. */
export interface ApiKeyView {
  readonly id: ApiKeyId;
  readonly name: string;
  readonly memberId: MemberId;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
  /** The permissions the key is limited to; null: its member's full rights. */
  readonly scopes: readonly string[] | null;
}

/** The columns of an ApiKeyView, for query handlers that read `api_keys` directly. */
export const API_KEY_VIEW_COLUMNS = `id, name, member_id AS "memberId", created_at AS "createdAt",
  expires_at AS "expiresAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt", scopes`;
