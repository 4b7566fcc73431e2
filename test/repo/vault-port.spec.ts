import { productSources } from './source-rules';

/**
 * The Vault sits behind one port (ARCH-04): `VaultSecrets` (libs/platform/src/vaults) is the only
 * code that checks and opens an item's values, and the vaults module the only code that knows
 * where they are kept (the `vault_items` table, its sealed `fields_record_id`, the sealed purpose
 * `vault-item.fields`). Bots, model providers and Apps reach values only through `VaultSecrets`,
 * so another adapter (an outside secret store) replaces that one class and the module's commands,
 * and nothing else changes. The product has one adapter today (sealed in PostgreSQL).
 */
const VAULTS = 'libs/platform/src/vaults/';
const STORAGE_NAMES = [/\bvault_items\b/, /\bfields_record_id\b/, /['"]vault-item\.fields['"]/, /\bVAULT_ITEM_FIELDS_PURPOSE\b/, /vaults\/storage\//];
const OPENS = /VAULT_ITEM_FIELDS_PURPOSE\)/;
/** The composition root lists every module's storage entities for TypeORM: that import names no value. */
const COMPOSITION_ROOT = 'libs/features/src/features.ts';
const ENTITY_LIST_IMPORT = /^import \{ VAULT_ENTITIES \} from '[./]*platform\/src\/vaults\/storage\/entities';$/m;

function findings(sources: ReadonlyArray<{ file: string; text: string }>): string[] {
  const out: string[] = [];
  for (const { file, text: source } of sources) {
    const text = file === COMPOSITION_ROOT ? source.replace(ENTITY_LIST_IMPORT, '') : source;
    if (!file.startsWith(VAULTS)) {
      for (const name of STORAGE_NAMES) if (name.test(text)) out.push(`${file} names the Vault's storage (${name.source})`);
    } else if (OPENS.test(text) && !file.endsWith('/vault-secrets.ts')) {
      out.push(`${file} opens item values outside VaultSecrets`);
    }
  }
  return out;
}

describe('[ARCH-04] the Vault behind its port', () => {
  it('[ARCH-04] only the vaults module names where Vault values are kept, and only VaultSecrets opens them: every user of a Vault goes through that port', () => {
    const sources = productSources(['apps', 'libs']);
    expect(findings(sources)).toEqual([]);
    // The scan read the port and its users (a renamed folder would make it pass on nothing).
    const users = sources.filter((s) => !s.file.startsWith(VAULTS) && /\bVaultSecrets\b/.test(s.text)).map((s) => s.file);
    expect(sources.some((s) => s.file === `${VAULTS}vault-secrets.ts` && OPENS.test(s.text))).toBe(true);
    expect(users).toEqual(expect.arrayContaining(['libs/platform/src/models/model-registry.ts', 'libs/features/src/bots/tools/http-tool.ts', 'libs/features/src/apps/app-client.ts']));
  });

  it('[ARCH-04] the scan flags a feature that reads the Vault table or opens item values itself', () => {
    const planted = [
      { file: 'libs/features/src/bots/zz-reader.ts', text: "await db.query('SELECT fields_record_id FROM vault_items WHERE id = $1', [id]);" },
      { file: 'libs/platform/src/vaults/queries/zz-open.ts', text: 'sealer.open(record, associatedData(id, VAULT_ITEM_FIELDS_PURPOSE));' },
    ];
    expect(findings(planted)).toEqual([
      'libs/features/src/bots/zz-reader.ts names the Vault\'s storage (\\bvault_items\\b)',
      'libs/features/src/bots/zz-reader.ts names the Vault\'s storage (\\bfields_record_id\\b)',
      'libs/platform/src/vaults/queries/zz-open.ts opens item values outside VaultSecrets',
    ]);
  });
});
