import { distance } from 'fastest-levenshtein';
import type { ModelToolCatalog, ToolFilter } from './model-tool-catalog.ts';

export interface UnknownTool {
  name: string;
  /** The closest names this job could call, nearest first (at most 3). */
  suggestions: string[];
}

const MAX_SUGGESTIONS = 3;

/**
 * The names among `names` that a job may not call (docs/semantics.md §7), each with the closest names
 * it may: `search_search` → `search__search`. Names of a configured server whose tool list is not
 * published yet pass: they cannot be checked now, and their calls wait for the list.
 */
export async function unknownTools(
  catalog: ModelToolCatalog,
  names: Iterable<string>,
  filters: ToolFilter[],
): Promise<UnknownTool[]> {
  const unknown: string[] = [];
  for (const name of new Set(names)) {
    if ((await catalog.judge(name, filters)) === 'unknown') unknown.push(name);
  }
  if (unknown.length === 0) return [];
  const callable = (await catalog.view(...filters)).tools.map((tool) => tool.name);
  return unknown.map((name) => ({ name, suggestions: closest(name, callable) }));
}

/** Names within a third of the name's length in edits (at least 2), nearest first. */
function closest(name: string, candidates: string[]): string[] {
  const limit = Math.max(2, Math.floor(name.length / 3));
  return candidates
    .map((candidate) => ({ candidate, edits: distance(name.toLowerCase(), candidate.toLowerCase()) }))
    .filter(({ edits }) => edits <= limit)
    .sort((a, b) => a.edits - b.edits || a.candidate.localeCompare(b.candidate))
    .slice(0, MAX_SUGGESTIONS)
    .map(({ candidate }) => candidate);
}
