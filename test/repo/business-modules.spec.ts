import { cruiseModules, PROBE_FILES } from './cruise';
import { productSources } from './source-rules';

/**
 * Accounts, organizations and SSO are separate business modules sharing the identity and access
 * rules (FW-09). Accounts are the members and their API keys; each module is a folder of its own.
 * Their business code (commands, queries, services) imports nothing of another of them: they meet
 * only in the database, where a storage entity may name another module's entity for its foreign
 * key. Roles and permissions come from one place, libs/domain/src/roles.ts: no module keeps a
 * role list or a role-to-permission table of its own.
 */
const MODULES: Readonly<Record<string, readonly string[]>> = {
  accounts: ['libs/platform/src/members/', 'libs/platform/src/api-keys/'],
  organizations: ['libs/platform/src/organizations/'],
  sso: ['libs/features/src/sso/'],
};

function moduleOf(path: string): string | null {
  return Object.entries(MODULES).find(([, folders]) => folders.some((folder) => path.startsWith(folder)))?.[0] ?? null;
}

const isStorage = (path: string): boolean => /\/storage\//.test(path);

describe('[FW-09] accounts, organizations and SSO are separate business modules', () => {
  it('[FW-09] their business code imports nothing of one another; only storage entities name another module’s entity (a foreign key)', async () => {
    const modules = await cruiseModules(Object.values(MODULES).flat(), { exclude: PROBE_FILES });
    const crossings: string[] = [];
    let seen = 0;
    for (const module of modules) {
      const from = moduleOf(module.source);
      if (from === null) continue;
      seen += 1;
      for (const dependency of module.dependencies) {
        const to = moduleOf(dependency.resolved);
        if (to === null || to === from) continue;
        if (isStorage(module.source) && isStorage(dependency.resolved)) continue;
        crossings.push(`${module.source} -> ${dependency.resolved}`);
      }
    }
    // Every module was read (a renamed folder would make this check pass on nothing).
    for (const folders of Object.values(MODULES)) expect(modules.some((m) => folders.some((f) => m.source.startsWith(f)))).toBe(true);
    expect(seen).toBeGreaterThan(10);
    expect(crossings).toEqual([]);
  });

  it('[FW-09] each takes roles and permissions from the shared domain rules and keeps no role table of its own', () => {
    const sources = productSources(Object.values(MODULES).flat().map((folder) => folder.replace(/\/$/, '')));
    for (const [name, folders] of Object.entries(MODULES)) {
      const own = sources.filter((s) => folders.some((folder) => s.file.startsWith(folder)));
      expect({ name, files: own.length > 0 }).toEqual({ name, files: true });
      // The shared rules: roles (MemberRole) and the caller with its permissions come from @openbot/domain.
      expect({ name, usesDomainRules: own.some((s) => /from '@openbot\/domain'/.test(s.text) && /\bMemberRole\b/.test(s.text)) }).toEqual({ name, usesDomainRules: true });
      const ownTables = own.filter((s) => /Record<MemberRole\b/.test(s.text) || /\[\s*'owner'\s*,\s*'admin'\s*,/.test(s.text)).map((s) => s.file);
      expect({ name, ownTables }).toEqual({ name, ownTables: [] });
    }
  });
});
