import { Controller, Get, UseGuards } from '@nestjs/common';
import { CurrentViewer, type Viewer, ViewerGuard } from './viewer.guard.ts';
import type { ViewerView } from './viewer-schema.ts';

/** Who the request's key is; a wrong key is the same 401 as anywhere else (the console's sign-in check). */
@UseGuards(ViewerGuard)
@Controller('v1/whoami')
export class WhoamiController {
  @Get()
  whoami(@CurrentViewer() viewer: Viewer): ViewerView {
    return viewer.kind === 'team' ? { kind: 'team', team: viewer.team.name } : { kind: 'operator' };
  }
}
