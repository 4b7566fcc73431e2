import { Inject, Injectable } from '@nestjs/common';
import { can, Forbidden, hostAllowed, InvalidInput, type InputIssue, type MemberCaller } from '@openbot/domain';
import { Database, type Sql } from '../database/sql';
import { associatedData } from '../sealing/sealed-records';
import { Sealer } from '../sealing/sealer';
import { mayUseVault } from './vault-rights';
import { VAULT_ITEM_FIELDS_PURPOSE, type VaultReference } from './vault-view';

/** One reference a saved definition names: where it is (for errors) and where its value would go. */
export interface ReferenceUse {
  /** The field path of the reference in the request, e.g. `tools.0.headers.authorization`. */
  readonly path: string;
  readonly reference: VaultReference;
  /** The URL the value is sent to: checked against the item's `allowedHosts`. */
  readonly url: string;
}

/** Whose work a send is for: its rights on each Vault are read again at every send. */
export interface SendActor {
  readonly kind: 'member' | 'service';
  readonly id: string;
}

export interface OpenRequest {
  readonly organizationId: string;
  readonly actor: SendActor;
  /** Where the values go: every item's `allowedHosts` must admit it. */
  readonly url: string;
  readonly references: readonly VaultReference[];
  /**
   * The engine's identity check (`CallRequest.checkIdentity`): asked after the values are
   * opened, right before they are handed back, because the call waited for them (IDN-06).
   */
  readonly checkIdentity?: () => Promise<void>;
}

/**
 * A reference that may not be used for this send: its item or field is gone, the host is not in
 * the item's `allowedHosts`, or the work's member may no longer use the Vault. Nothing was sent
 * (`notSent`), it is not retried, and its category is `forbidden`. Its message names the
 * reference and the reason, never a value.
 */
export class VaultReferenceRefused extends Error {
  override readonly name = 'VaultReferenceRefused';
  readonly category = 'forbidden';
  /** An execution failing of it ends with this category (a model call's refused key). */
  readonly failureCategory = 'forbidden';
  readonly safeToRetry = false;
  readonly notSent = true;
  constructor(reason: string) {
    super(`a Vault reference cannot be used: ${reason}`);
  }
}

interface ItemRow {
  readonly id: string;
  readonly allowedHosts: string[];
  readonly fieldNames: string[];
  readonly role: string | null;
  readonly granted: boolean;
  readonly recordId: string;
  readonly keyId: string;
  readonly data: Buffer;
}

/**
 * The one way the platform checks and opens Vault references (SEC-02, FW-08). `checkForSave`
 * runs when a definition naming references is saved; `open` runs inside a call-log send, right
 * before the request leaves, and is the only place an item's values are decrypted. Both check
 * the same three things again: the item and field exist in the organization (by ID, never by
 * name), its `allowedHosts` admit the URL, and the member may use its Vault (`vaults.use`).
 */
@Injectable()
export class VaultSecrets {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Sealer) private readonly sealer: Sealer,
  ) {}

  /**
   * Refuses a save naming a reference the caller may not name: a caller without `vaults.use` on
   * its Vault is Forbidden; an unknown item or field is InvalidInput on its path, and so is a
   * URL outside the item's `allowedHosts`.
   */
  async checkForSave(caller: MemberCaller, uses: readonly ReferenceUse[], db: Sql = this.db): Promise<void> {
    if (uses.length === 0) return;
    const rows = await this.readItems(db, caller.organizationId, caller.memberId, uses.map((u) => u.reference.vaultItemId), false);
    const issues: InputIssue[] = [];
    let forbidden = false;
    for (const use of uses) {
      const item = rows.get(use.reference.vaultItemId.toLowerCase());
      if (item === undefined) issues.push({ path: `${use.path}.vaultItemId`, message: 'this Vault item does not exist in this organization' });
      else if (!can(caller, 'vaults.use') || !mayUseVault(item)) forbidden = true;
      else if (!item.fieldNames.includes(use.reference.field)) issues.push({ path: `${use.path}.field`, message: `the Vault item has no field "${use.reference.field}"` });
      else if (!hostAllowed(item.allowedHosts, use.url)) issues.push({ path: use.path, message: `the Vault item's allowedHosts do not include the host of ${safeHost(use.url)}` });
    }
    // No right on the Vault is the answer first: whatever else is wrong, the caller may not name it.
    if (forbidden) throw new Forbidden('Naming a Vault reference needs vaults.use on its Vault.');
    if (issues.length > 0) throw new InvalidInput(issues);
  }

  /**
   * The values of `references`, in order, as they are now: the items and their sealed fields are
   * read in one statement, so every value of one send comes from one state of each item (never
   * a mixture of an old and a new PUT). Throws VaultReferenceRefused when any check fails:
   * then nothing is opened and nothing may be sent.
   */
  async open(request: OpenRequest): Promise<string[]> {
    const { references } = request;
    if (references.length === 0) return [];
    if (request.actor.kind !== 'member') throw new VaultReferenceRefused('only a member\'s work may use Vault items');
    const rows = await this.readItems(this.db, request.organizationId, request.actor.id, references.map((r) => r.vaultItemId), true);
    for (const reference of references) {
      const item = rows.get(reference.vaultItemId.toLowerCase());
      if (item === undefined) throw new VaultReferenceRefused(`Vault item ${reference.vaultItemId} no longer exists`);
      if (!item.fieldNames.includes(reference.field)) throw new VaultReferenceRefused(`Vault item ${reference.vaultItemId} has no field "${reference.field}"`);
      if (!hostAllowed(item.allowedHosts, request.url)) throw new VaultReferenceRefused(`the allowedHosts of Vault item ${reference.vaultItemId} do not include ${safeHost(request.url)}`);
      if (!mayUseVault(item)) throw new VaultReferenceRefused(`the member may not use the Vault of item ${reference.vaultItemId}`);
    }
    const opened = new Map<string, Record<string, unknown>>();
    const values = references.map((reference) => {
      const item = rows.get(reference.vaultItemId.toLowerCase())!;
      let fields = opened.get(item.id);
      if (fields === undefined) {
        const plain = this.sealer.open({ keyId: item.keyId, data: item.data }, associatedData(item.recordId, VAULT_ITEM_FIELDS_PURPOSE));
        fields = JSON.parse(plain.toString('utf8')) as Record<string, unknown>;
        opened.set(item.id, fields);
      }
      const value = fields[reference.field];
      if (typeof value !== 'string') throw new VaultReferenceRefused(`Vault item ${reference.vaultItemId} has no field "${reference.field}"`);
      return `${reference.prefix ?? ''}${value}`;
    });
    // The call waited for its secrets: the work's identity must still be valid to send them (IDN-06).
    if (request.checkIdentity !== undefined) {
      try {
        await request.checkIdentity();
      } catch (error) {
        throw Object.assign(error instanceof Error ? error : new Error(String(error)), { notSent: true, safeToRetry: false });
      }
    }
    return values;
  }

  private async readItems(db: Sql, organizationId: string, memberId: string, ids: readonly string[], withData: boolean): Promise<Map<string, ItemRow>> {
    const wanted = [...new Set(ids.map((id) => id.toLowerCase()))];
    const rows = await db.rows<ItemRow>(
      `SELECT i.id, i.allowed_hosts AS "allowedHosts", i.field_names AS "fieldNames",
              (SELECT m.role FROM members m WHERE m.id = $3::uuid AND m.organization_id = $1 AND m.removed_at IS NULL) AS role,
              EXISTS (SELECT 1 FROM vault_users u WHERE u.vault_id = i.vault_id AND u.member_id = $3::uuid) AS granted,
              s.id AS "recordId", s.key_id AS "keyId", ${withData ? 's.data' : 'NULL::bytea AS data'}
         FROM vault_items i JOIN sealed_records s ON s.id = i.fields_record_id
        WHERE i.organization_id = $1 AND i.id = ANY($2::uuid[])`,
      [organizationId, wanted, memberId],
    );
    return new Map(rows.map((row) => [row.id, row]));
  }
}

/** The host and port of a URL for a message; never its path or query, which may carry anything. */
function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an invalid URL';
  }
}
