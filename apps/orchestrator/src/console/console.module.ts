import { type DynamicModule, Module } from '@nestjs/common';
import { ServeStaticModule } from '@nestjs/serve-static';
import type { Response } from 'express';
import type { Logger } from '../runtime/logger.ts';
import { CONSOLE_ASSETS_DIR, consoleCacheControl, consoleIsBuilt } from './console-assets.ts';

/** The URL path of the web console. */
export const CONSOLE_PATH = '/console';

/**
 * The web console (a Vite + React app in apps/orchestrator/console/) at /console: its files, and its
 * page for every other path under /console so that the browser's router resolves deep links (SPA
 * fallback). A missing hashed asset stays a 404 instead of becoming the page. The console calls the
 * same /v1 API with the team key the person types in; it holds no secret of its own.
 */
@Module({})
export class ConsoleModule {
  static forRoot(log: Logger): DynamicModule {
    if (!consoleIsBuilt()) {
      // Not fatal: the API works without it. `npm run build` (or `-w apps/orchestrator`) builds it.
      log.warn(
        { dir: CONSOLE_ASSETS_DIR },
        'web console not built (npm run build -w apps/orchestrator): /console answers 404',
      );
      return { module: ConsoleModule };
    }
    return {
      module: ConsoleModule,
      imports: [
        ServeStaticModule.forRoot({
          rootPath: CONSOLE_ASSETS_DIR,
          serveRoot: CONSOLE_PATH,
          exclude: new RegExp(`^${CONSOLE_PATH}/assets/`),
          serveStaticOptions: {
            cacheControl: false,
            fallthrough: true,
            setHeaders: (response: Response, path: string) => {
              response.setHeader('Cache-Control', consoleCacheControl(path));
            },
          },
        }),
      ],
    };
  }
}
