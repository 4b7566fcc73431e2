#!/usr/bin/env node
// Writes docs/capability-map.md: every rule ID of docs/rules.md with the test cases whose titles
// (or enclosing describe titles) name it, or the reason it has none. `--check` fails when the
// committed file is stale. It reads only files inside the repository and needs no packages, so it
// runs in a fresh clone before `npm ci`.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { ruleClaims } from './test-cases.mjs';

const root = join(import.meta.dirname, '..');
// OPENBOT_RULES may name another catalogue, but only one inside the repository.
const rulesFile = join(root, process.env.OPENBOT_RULES ?? join('docs', 'rules.md'));
if (isAbsolute(process.env.OPENBOT_RULES ?? '') || relative(root, rulesFile).startsWith('..')) {
  process.stderr.write(`OPENBOT_RULES must be a path inside the repository, relative to its root\n`);
  process.exit(2);
}
const target = join(root, 'docs', 'capability-map.md');

/** Rules with no test yet, and why. Remove a line when a test names the rule. */
const NOTES = {
  'PLAT-03': 'not built yet: object storage arrives with files; PostgreSQL is the only service so far',
  'PLAT-04': 'not built yet: node-to-node RPC arrives with Computers and Live sessions',
  'PLAT-05': 'not built yet as a test of its own; the two-process tests run the one engine on several nodes',
  'PLAT-07': 'not built yet: the ChatGPT OAuth provider',
  'PLAT-08': 'not built yet: usage, prices, credits and limits',
  'ARCH-02': 'not built yet as a test; DTOs live in libs/api, entities in storage/ folders (dependency rules)',
  'ARCH-03': 'not built yet as a test of its own; domain failures are mapped only by libs/api/src/errors (see ERR-02 tests)',
  'ARCH-04': 'not built yet: model, Computer, Vault and object-store ports',
  'ARCH-05': 'not built yet as a test; query handlers read the database directly',
  'ARCH-06': 'not built yet as a test; modules open connections only in lifecycle hooks',
  'STC-12': 'not built yet: Apps',
  'MEM-01': 'not built yet: memory',
  'MEM-02': 'not built yet: memory',
  'MEM-03': 'not built yet: memory',
  'RES-05': 'not built yet: Live sessions',
  'RES-06': 'not built yet: physical leases of Computers and Live sessions',
  'RES-07': 'not built yet: App connections',
  'GRANT-01': 'not built yet: App authorization grants',
  'GRANT-02': 'not built yet: App authorization grants',
  'GRANT-03': 'not built yet: App authorization grants',
  'GRANT-04': 'not built yet: App authorization grants',
  'GRANT-05': 'not built yet: App authorization grants',
  'GRANT-06': 'not built yet: App authorization grants',
  'GRANT-07': 'not built yet: App authorization grants',
  'IDN-03': 'not built yet: Channels',
  'IDN-07': 'not built yet: approvals',
  'FW-02': 'not built yet: approvals, delegation, plans',
  'FW-03': 'not built yet: memory',
  'FW-04': 'not built yet: Code Mode',
  'FW-05': 'not built yet: Apps',
  'FW-06': 'not built yet: Channels, triggers, reminders',
  'FW-07': 'not built yet: Computers, Connectors, Live',
  'FW-08': 'not built yet: files and Vaults',
  'TASK-01': 'not built yet: tasks',
  'TASK-02': 'not built yet: tasks',
  'TASK-03': 'not built yet: tasks',
  'TASK-04': 'not built yet: tasks',
  'LIM-01': 'not built yet: limits',
  'APPR-01': 'not built yet: approvals',
  'DLG-01': 'not built yet: delegation',
  'DEVT-01': 'not built yet: developer tests',
  'CONN-01': 'not built yet: connections',
  'SEC-02': 'not built yet: Vaults',
  'MIG-03': 'not built yet: no data conversions exist yet (the mechanism arrives with the first one)',
  'MIG-04': 'not applicable: no predecessor deployment, so no imported File or Index history',
};

function specFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.toolchain', '.openbot', '.git'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...specFiles(path));
    else if (entry.name.endsWith('.spec.ts')) out.push(path);
  }
  return out;
}

const rules = [...readFileSync(rulesFile, 'utf8').matchAll(/^- ([A-Z]+-\d+) (.*)$/gm)].map((m) => ({ id: m[1], text: m[2] }));
const tests = new Map();
for (const file of ['libs', 'apps', 'test'].filter((d) => existsSync(join(root, d))).flatMap((d) => specFiles(join(root, d)))) {
  // Only test cases count: a title may name several rules up front (`[CALL-03][RES-02] …`), and
  // a describe that names a rule passes it to the cases inside it, never counting on its own.
  for (const [id, title] of ruleClaims(readFileSync(file, 'utf8'))) {
    const list = tests.get(id) ?? [];
    list.push(`\`${relative(root, file)}\`: ${title.replaceAll('|', '\\|')}`);
    tests.set(id, list);
  }
}

const lines = [
  '# Capability map',
  '',
  'Every rule of `docs/rules.md` with the test cases that prove it (their titles, or the titles of',
  'the `describe` blocks around them, start with the rule ID), or the reason it has none yet.',
  'Generated by `node scripts/capability-map.mjs`; a test (`test/repo/capability-map.spec.ts`)',
  'fails when this file is stale.',
  '',
  '| Rule | Tests |',
  '|---|---|',
];
// Stale notes are reported (not fatal: another catalogue may be given with OPENBOT_RULES).
for (const id of Object.keys(NOTES)) {
  if (!rules.some((rule) => rule.id === id)) process.stderr.write(`note: NOTES names ${id}, which the catalogue does not have\n`);
  else if (tests.has(id)) process.stderr.write(`note: ${id} has tests now; remove its line from NOTES\n`);
}
for (const rule of rules) {
  const named = tests.get(rule.id);
  const cell = named ? named.join('<br>') : (NOTES[rule.id] ?? 'not built yet');
  lines.push(`| ${rule.id} | ${cell} |`);
}
const text = `${lines.join('\n')}\n`;
if (process.argv.includes('--check')) {
  const current = readFileSync(target, 'utf8');
  if (current !== text) {
    process.stderr.write('docs/capability-map.md is stale: run node scripts/capability-map.mjs\n');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
}
