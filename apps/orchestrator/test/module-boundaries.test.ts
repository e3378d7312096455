import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith('.ts') ? [path] : [];
  });
}

/** The capability folder a file belongs to (`jobs`, `agent`, …); undefined for files at the root. */
function capability(file: string): string | undefined {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Which capability folders import which, from the relative imports in the sources. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = capability(file);
    if (!from) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
      const to = capability(resolve(dirname(file), match[1] as string));
      if (!to || to === from) continue;
      const edges = graph.get(from) ?? new Set<string>();
      edges.add(to);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Every cycle's path, found by depth-first search. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const visit = (node: string, path: string[]) => {
    for (const next of graph.get(node) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) found.push([...path.slice(at), next]);
      else visit(next, [...path, next]);
    }
  };
  for (const start of graph.keys()) visit(start, [start]);
  return found;
}

describe('module boundaries of the orchestrator (docs/architecture.md §1)', () => {
  it('has no import cycle between capability folders', () => {
    const graph = folderGraph();
    expect(graph.size).toBeGreaterThan(5);
    expect(cycles(graph).map((cycle) => cycle.join(' → '))).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['jobs', new Set(['agent'])],
      ['agent', new Set(['jobs'])],
    ]);
    expect(cycles(graph).length).toBeGreaterThan(0);
  });
});
