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
 * The tools a model may see, built from what the workers published (DESIGN §5 Catalog and names).
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
      ...all,
      tools: all.tools.filter((tool) => filters.every((filter) => permits(filter, tool.name))),
    };
  }

  /**
   * Resolves a model-facing name within the filters; undefined when unknown or not allowed. A tool of a
   * configured server that no worker has listed yet resolves too (unavailable), so the call ends
   * `unavailable` rather than as an unknown tool.
   */
  async resolve(name: string, ...filters: ToolFilter[]): Promise<ModelTool | undefined> {
    const listed = (await this.view(...filters)).tools.find((tool) => tool.name === name);
    if (listed) return listed;
    const [server, tool] = name.split('__', 2);
    const serverConfig = server ? this.config.servers[server] : undefined;
    if (!server || !tool || !serverConfig || (await this.reader.entries()).has(server)) return undefined;
    if (!filters.every((filter) => permits(filter, name))) return undefined;
    return {
      name,
      server,
      tool,
      description: tool,
      inputSchema: {},
      availability: await this.reader.availability(server, serverConfig.unavailableAfterMs),
      idempotent: isIdempotent(serverConfig, tool, undefined),
      definition: { name: tool, inputSchema: {} },
    };
  }

  private async everything(): Promise<ModelToolView> {
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
    for (const [name, candidates] of byName) {
      if (candidates.length === 1) tools.push(candidates[0] as ModelTool);
      else {
        const message = `tool name collision: ${name} would stand for ${candidates.map((tool) => `${tool.server}/${tool.tool}`).join(' and ')}; both are left out`;
        errors.push(message);
        this.log.error({ name }, message);
      }
    }
    tools.sort((a, b) => a.name.localeCompare(b.name));
    return { tools, errors };
  }
}
