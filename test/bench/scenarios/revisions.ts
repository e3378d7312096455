import { exampleServer } from '../../support/fleet.ts';
import { exampleServerPath, tsxArgs } from '../../support/paths.ts';
import { freePort } from '../../support/ports.ts';
import { all, benchFleet, CallIds, dispatchOk, progress, rotate, withScope } from '../harness.ts';
import { type Summary, summarize, timed } from '../stats.ts';

const WAYS = ['modernStdio', 'legacyStdio', 'modernHttp', 'legacyHttp'] as const;
type Way = (typeof WAYS)[number];

export interface RevisionsResult {
  rounds: number;
  /** The same echo through Switchyard on a 2026-07-28-only server (stateless requests, `_meta` envelope). */
  modernStdio: Summary;
  modernHttp: Summary;
  /** …and on a 2025-11-25 server (initialize session): the recorder example. */
  legacyStdio: Summary;
  legacyHttp: Summary;
}

export interface RevisionsOptions {
  warmup: number;
  rounds: number;
  perRound: number;
}

/**
 * What the stateless 2026-07-28 revision costs per call next to a 2025-11-25 session: an echo through
 * Switchyard (dispatcher → queue → worker → MCP) on servers of either revision, over stdio and over
 * Streamable HTTP, one call at a time, taking turns in rounds so noise falls on all of them alike.
 */
export function revisions(options: RevisionsOptions): Promise<RevisionsResult> {
  return withScope(async (scope) => {
    const [modernPort, legacyPort] = await Promise.all([freePort(), freePort()]);
    const fleet = scope.add(
      benchFleet('bench-revisions', () => ({
        'modern-stdio': exampleServer('modern', { idempotent: ['echo'] }),
        'legacy-stdio': exampleServer('recorder', { idempotent: ['echo'] }),
        'modern-http': { transport: 'http', url: `http://127.0.0.1:${modernPort}/mcp`, idempotent: ['echo'] },
        'legacy-http': { transport: 'http', url: `http://127.0.0.1:${legacyPort}/mcp`, idempotent: ['echo'] },
      })),
    );
    progress('revisions: starting 2026-07-28 and 2025-11-25 servers over HTTP, and a worker');
    const serveHttp = async (name: string, port: number) => {
      const server = fleet.group.start(
        `${name} http`,
        tsxArgs(exampleServerPath(name), '--http', String(port)),
      );
      await server.waitFor((_log, raw) => raw.includes('"listening"'), `the ${name} HTTP server to listen`);
    };
    await all([serveHttp('modern', modernPort), serveHttp('recorder', legacyPort)]);
    await fleet.startWorker({ id: 'w-revisions' });
    const dispatcher = await fleet.dispatcher();
    const ids = new CallIds('bench-revisions');
    const server: Record<Way, string> = {
      modernStdio: 'modern-stdio',
      legacyStdio: 'legacy-stdio',
      modernHttp: 'modern-http',
      legacyHttp: 'legacy-http',
    };
    const call = (way: Way) => timed(() => dispatchOk(dispatcher, ids, server[way], 'echo', { text: 'x' }));
    const samples: Record<Way, number[]> = {
      modernStdio: [],
      legacyStdio: [],
      modernHttp: [],
      legacyHttp: [],
    };
    for (const way of WAYS) for (let i = 0; i < options.warmup; i++) await call(way);
    for (let round = 0; round < options.rounds; round++) {
      for (const way of rotate(WAYS, round))
        for (let i = 0; i < options.perRound; i++) samples[way].push(await call(way));
      if ((round + 1) % 5 === 0 || round + 1 === options.rounds)
        progress(`revisions: round ${round + 1}/${options.rounds}`);
    }
    return {
      rounds: options.rounds,
      modernStdio: summarize(samples.modernStdio),
      modernHttp: summarize(samples.modernHttp),
      legacyStdio: summarize(samples.legacyStdio),
      legacyHttp: summarize(samples.legacyHttp),
    };
  });
}
