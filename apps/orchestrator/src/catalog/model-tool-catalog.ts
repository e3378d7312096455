import { setTimeout as delay } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { type CatalogTool, isIdempotent, type SwitchyardConfig } from '@switchyard/contracts';
import picomatch from 'picomatch';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER } from '../runtime/tokens.ts';
import { CatalogReader, type ServerAvailability } from './catalog-reader.ts';
import { modelToolName } from './tool-names.ts';

export interface ModelTool {
  /** `<server>__<tool>`, sanitised. */
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  availability: ServerAvailability;
  idempotent: boolean;
  definition: CatalogTool;
}

export interface ToolFilter {
  allow: string[];
  deny: string[];
}

export interface ModelToolView {
  tools: ModelTool[];
  /** Tools left out because their model-facing names collide: an error, never a silent overwrite. */
  errors: string[];
}

/** Why a model-facing name was not resolved; the call ends with this, never sent. */
export interface RefusedTool {
  status: 'failed' | 'unavailable';
  code: 'unknown_or_disallowed_tool' | 'ambiguous_tool_name' | 'no_worker' | 'catalog_unpublished';
  text: string;
  server?: string;
}

export type ToolResolution =
  | { tool: ModelTool; refused?: undefined }
  | { tool?: undefined; refused: RefusedTool };

/** How often a call to a server whose tool list is not published yet looks again. */
const CATALOG_POLL_MS = 250;

const compiled = new Map<string, (name: string) => boolean>();
function matcher(patterns: string[]): (name: string) => boolean {
  const key = JSON.stringify(patterns);
  let match = compiled.get(key);
  if (!match) {
    match = patterns.length > 0 ? picomatch(patterns) : () => false;
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, match);
  }
  return match;
}

/** allow minus deny, as glob patterns over model-facing names (`docs__*`). */
function permits(filter: ToolFilter, name: string): boolean {
  return matcher(filter.allow)(name) && !matcher(filter.deny)(name);
}

/**
 * The tools a model may see, built from what the workers published (docs/semantics.md §7).
 * Tools of servers with no ready worker stay in the list, marked unavailable.
 */
@Injectable()
export class ModelToolCatalog {
  constructor(
    @Inject(CatalogReader) private readonly reader: CatalogReader,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  /** Every tool passing all the filters (team's, then the job's). */
  async view(...filters: ToolFilter[]): Promise<ModelToolView> {
    const all = await this.everything();
    return {
      errors: all.errors,
      tools: all.tools.filter((tool) => filters.every((filter) => permits(filter, tool.name))),
    };
  }

  /**
   * Resolves a model-facing name to exactly one (server, tool) of the published catalog, then applies
   * the filters to that tool's canonical name; anything unknown, ambiguous or filtered out is refused.
   * Server names never contain `__`, so the server is the text before the first one. Until that server
   * has published its tool list the name cannot be checked: the call waits for the list (up to the
   * server's queueTimeoutMs, or until `signal` aborts) instead of guessing which tool it means.
   */
  async resolve(name: string, filters: ToolFilter[], signal?: AbortSignal): Promise<ToolResolution> {
    const unknown: ToolResolution = {
      refused: {
        status: 'failed',
        code: 'unknown_or_disallowed_tool',
        text: `No tool named "${name}" is available to this job (unknown, or not allowed by its filters); the call was not sent.`,
      },
    };
    const separator = name.indexOf('__');
    const server = separator > 0 ? name.slice(0, separator) : undefined;
    const serverConfig = server ? this.config.servers[server] : undefined;
    if (!server || !serverConfig) return unknown;

    const waitUntil = Date.now() + serverConfig.queueTimeoutMs;
    while (!(await this.reader.entries()).has(server)) {
      const availability = await this.reader.availability(server, serverConfig.unavailableAfterMs);
      if (availability === 'none' || availability === 'down') {
        const text = `No worker serves ${server} right now, so its tools are not known; the call was not sent.`;
        return { refused: { status: 'unavailable', code: 'no_worker', text, server } };
      }
      if (Date.now() >= waitUntil || signal?.aborted) {
        const text = `${server} had not published its tool list after ${serverConfig.queueTimeoutMs} ms, so "${name}" could not be checked; the call was not sent.`;
        return { refused: { status: 'unavailable', code: 'catalog_unpublished', text, server } };
      }
      await delay(CATALOG_POLL_MS, undefined, { signal }).catch(() => undefined);
    }

    const all = await this.everything();
    if (all.collided.has(name)) {
      const text = `The tool name "${name}" stands for more than one tool, so it cannot be called.`;
      return { refused: { status: 'failed', code: 'ambiguous_tool_name', text, server } };
    }
    const tool = all.tools.find((candidate) => candidate.name === name);
    // tool.name is the pair's canonical model-facing name: the filters judge the tool, not the spelling.
    if (!tool || !filters.every((filter) => permits(filter, tool.name))) return unknown;
    return { tool };
  }

  /**
   * Whether a job may name this tool, judged at submit without waiting: `unknown` when its server is
   * not configured, or the server's published list has no such tool for these filters; `unpublished`
   * when the server is configured but no worker has published its list yet (the call will wait for
   * it, as `resolve` does, and end `unavailable` if it never comes).
   */
  async judge(name: string, filters: ToolFilter[]): Promise<'known' | 'unknown' | 'unpublished'> {
    const separator = name.indexOf('__');
    const server = separator > 0 ? name.slice(0, separator) : undefined;
    if (!server || !this.config.servers[server]) return 'unknown';
    if (!(await this.reader.entries()).has(server)) return 'unpublished';
    const all = await this.everything();
    const tool = all.tools.find((candidate) => candidate.name === name);
    return tool && filters.every((filter) => permits(filter, tool.name)) ? 'known' : 'unknown';
  }

  private async everything(): Promise<ModelToolView & { collided: Set<string> }> {
    const entries = await this.reader.entries();
    const byName = new Map<string, ModelTool[]>();
    for (const [server, entry] of entries) {
      const serverConfig = this.config.servers[server];
      if (!serverConfig) continue; // published by a worker running another config: not ours to offer
      const availability = await this.reader.availability(server, serverConfig.unavailableAfterMs);
      for (const definition of entry.tools) {
        const name = modelToolName(server, definition.name);
        const tool: ModelTool = {
          name,
          server,
          tool: definition.name,
          description: definition.description ?? definition.title ?? definition.name,
          inputSchema: definition.inputSchema,
          availability,
          idempotent: isIdempotent(serverConfig, definition.name, definition.annotations),
          definition,
        };
        byName.set(name, [...(byName.get(name) ?? []), tool]);
      }
    }
    const tools: ModelTool[] = [];
    const errors: string[] = [];
    const collided = new Set<string>();
    for (const [name, candidates] of byName) {
      if (candidates.length === 1) tools.push(candidates[0] as ModelTool);
      else {
        collided.add(name);
        const message = `tool name collision: ${name} would stand for ${candidates.map((tool) => `${tool.server}/${tool.tool}`).join(' and ')}; both are left out`;
        errors.push(message);
        this.log.error({ name }, message);
      }
    }
    tools.sort((a, b) => a.name.localeCompare(b.name));
    return { tools, errors, collided };
  }
}
