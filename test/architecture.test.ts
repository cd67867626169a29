/**
 * The floor plan's rules (../shared/architecture.md), checked on the import lines of every file in
 * src/. Each rule is a function of the import graph, so the same functions also run on a small
 * graph with one bad import each, which shows every rule can fail.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** file (relative to the repository, e.g. `src/domain/schema.ts`) -> what it imports (files, or package names). */
type Graph = Map<string, string[]>;

const ENGINES = ['better-sqlite3', 'mongodb', '@eventstore/db-client', '@kurrent/kurrentdb-client'];
const DOMAIN_PACKAGES = ['io-ts', 'fp-ts'];

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });

// Static imports, re-exports and dynamic imports with a literal specifier; `import type` counts too.
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

const readGraph = (): Graph => {
  const graph: Graph = new Map();
  for (const file of sourceFiles(join(root, 'src'))) {
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      targets.push(spec.startsWith('.') ? relative(root, resolve(dirname(file), spec)) : spec);
    }
    graph.set(relative(root, file), targets);
  }
  return graph;
};

const isFile = (target: string) => target.startsWith('src/');
const packageName = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
/** Top-level folder of src/ a file belongs to (`src/main.ts` is its own). */
const folderOf = (file: string) => {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.ts$/, '');
};

type Rule = (graph: Graph) => string[];

const edges = (graph: Graph) => [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })));

export const rules: Record<string, Rule> = {
  '1. src/domain imports only src/domain, io-ts and fp-ts': (graph) =>
    edges(graph)
      .filter(({ from }) => from.startsWith('src/domain/'))
      .filter(({ to }) => (isFile(to) ? !to.startsWith('src/domain/') : !DOMAIN_PACKAGES.includes(packageName(to))))
      .map(({ from, to }) => `${from} imports ${to}`),
  '2. only adapters and drivers import an engine package': (graph) =>
    edges(graph)
      .filter(({ from }) => !from.includes('/adapters/') && !from.startsWith('src/drivers/'))
      .filter(({ to }) => !isFile(to) && ENGINES.includes(packageName(to)))
      .map(({ from, to }) => `${from} imports ${to}`),
  '3. projections never import commands, queries or http': (graph) =>
    edges(graph)
      .filter(({ from }) => from.startsWith('src/projections/'))
      .filter(({ to }) => ['src/commands/', 'src/queries/', 'src/http/'].some((p) => to.startsWith(p)))
      .map(({ from, to }) => `${from} imports ${to}`),
  '4. only src/main.ts and src/cli import src/app': (graph) =>
    edges(graph)
      .filter(({ to }) => to.startsWith('src/app/'))
      .filter(({ from }) => from !== 'src/main.ts' && !from.startsWith('src/cli/') && !from.startsWith('src/app/'))
      .map(({ from, to }) => `${from} imports ${to}`),
  '5. http and cli never import each other': (graph) =>
    edges(graph)
      .filter(
        ({ from, to }) =>
          (from.startsWith('src/http/') && to.startsWith('src/cli/')) || (from.startsWith('src/cli/') && to.startsWith('src/http/')),
      )
      .map(({ from, to }) => `${from} imports ${to}`),
  '6. no import cycle between folders of src': (graph) => {
    // Folder graph, each edge kept with one import line that makes it; a folder that can reach a
    // folder which reaches it back is in a cycle, and every edge inside one is reported.
    const folders = new Map<string, Map<string, string>>();
    for (const { from, to } of edges(graph)) {
      if (!isFile(to) || folderOf(from) === folderOf(to)) continue;
      const out = folders.get(folderOf(from)) ?? new Map<string, string>();
      if (!out.has(folderOf(to))) out.set(folderOf(to), `${from} -> ${to}`);
      folders.set(folderOf(from), out);
    }
    const reachable = (start: string) => {
      const seen = new Set<string>();
      const stack = [start];
      while (stack.length) {
        for (const next of folders.get(stack.pop()!)?.keys() ?? []) {
          if (!seen.has(next)) stack.push(next), seen.add(next);
        }
      }
      return seen;
    };
    return [...folders].flatMap(([a, out]) =>
      [...out].filter(([b]) => reachable(b).has(a)).map(([b, line]) => `${a} -> ${b} is part of a cycle (${line})`),
    );
  },
};

const test = suite('architecture');
const graph = readGraph();

test('the graph reads every file of src/ and their imports', () => {
  assert.ok(graph.size > 100, `only ${graph.size} files read`);
  assert.ok(graph.get('src/main.ts')?.includes('src/app/service.ts'), 'src/main.ts imports src/app/service.ts');
});

for (const [name, rule] of Object.entries(rules)) {
  test(name, () => {
    const problems = rule(graph);
    assert.equal(problems, [], problems.join('\n'));
  });
}

// One bad import per rule, added to the real graph: each rule must see it.
const withImport = (from: string, to: string): Graph => new Map([...graph, [from, [...(graph.get(from) ?? []), to]]]);
const bad: Record<string, Graph> = {
  '1. src/domain imports only src/domain, io-ts and fp-ts': withImport('src/domain/schema.ts', 'node:fs'),
  '2. only adapters and drivers import an engine package': withImport('src/queries/object-api.ts', 'mongodb'),
  '3. projections never import commands, queries or http': withImport('src/projections/projector.ts', 'src/http/errors.ts'),
  '4. only src/main.ts and src/cli import src/app': withImport('src/http/koa-app.ts', 'src/app/service.ts'),
  '5. http and cli never import each other': withImport('src/cli/main.ts', 'src/http/errors.ts'),
  '6. no import cycle between folders of src': withImport('src/domain/errors.ts', 'src/commands/context.ts'),
};
for (const [name, g] of Object.entries(bad)) {
  test(`${name}: fails on one bad import`, () => {
    assert.ok(rules[name]!(g).length > 0, 'the bad import went unnoticed');
  });
}

test.run();
