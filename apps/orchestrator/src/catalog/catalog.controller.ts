import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { requiresTask } from '@switchyard/contracts';
import picomatch from 'picomatch';
import { CurrentViewer, type Viewer, ViewerGuard } from '../auth/viewer.guard.ts';
import { ModelToolCatalog, type ModelToolView, type ToolFilter } from './model-tool-catalog.ts';
import type { ToolList } from './tool-list-schema.ts';

const EVERYTHING: ToolFilter = { allow: ['*'], deny: [] };
const COLLISION = /^tool name collision: (\S+) /;

/**
 * The tools a viewer may know of: an operator every one, a team those its filters allow. Name
 * collisions are reported to a team only for names it could call.
 */
export async function visibleTools(catalog: ModelToolCatalog, viewer: Viewer): Promise<ModelToolView> {
  if (viewer.kind === 'operator') return catalog.view(EVERYTHING);
  const filter = viewer.team.config.tools;
  const view = await catalog.view(filter);
  const allowed = filter.allow.length > 0 ? picomatch(filter.allow) : () => false;
  const denied = filter.deny.length > 0 ? picomatch(filter.deny) : () => false;
  const errors = view.errors.filter((error) => {
    const name = COLLISION.exec(error)?.[1];
    return name !== undefined && allowed(name) && !denied(name);
  });
  return { tools: view.tools, errors };
}

@UseGuards(ViewerGuard)
@Controller('v1/tools')
export class CatalogController {
  constructor(@Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog) {}

  @Get()
  async list(@CurrentViewer() viewer: Viewer): Promise<ToolList> {
    const view = await visibleTools(this.catalog, viewer);
    return {
      tools: view.tools.map((tool) => ({
        name: tool.name,
        server: tool.server,
        tool: tool.tool,
        description: tool.description,
        available: tool.availability === 'ready',
        availability: tool.availability,
        idempotent: tool.idempotent,
        inputSchema: tool.inputSchema,
        ...(tool.definition.annotations ? { annotations: tool.definition.annotations } : {}),
        ...(tool.definition.execution ? { execution: tool.definition.execution } : {}),
        requiresTask: requiresTask(tool.definition),
      })),
      errors: view.errors,
    };
  }
}
