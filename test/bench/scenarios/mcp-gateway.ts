import { Deployment, TEAM_KEYS } from '../../support/deployment.ts';
import { exampleServer } from '../../support/fleet.ts';
import { connectGateway, type GatewayClient } from '../../support/mcp-clients.ts';
import { WarmSession } from '../direct-client.ts';
import { all, BENCH_PROCESS_ENV, interleavedRounds, progress, withScope } from '../harness.ts';
import { ms, perSecond, ratio, type Summary, summarize, timed } from '../stats.ts';

export interface McpGatewayOptions {
  warmup: number;
  rounds: number;
  /** Sequential echo calls per path per round. */
  perRound: number;
  /** The throughput run: this many MCP clients over this many concurrency-1 servers. */
  clients: number;
  servers: number;
  callsPerClient: number;
}

/** Sized like the other scenarios: about a minute on 2 cores. */
export const MCP_GATEWAY_SETTINGS: McpGatewayOptions = {
  warmup: 20,
  rounds: 10,
  perRound: 30,
  clients: 50,
  servers: 10,
  callsPerClient: 20,
};

export interface McpGatewayResult {
  rounds: number;
  /** MCP SDK Client in this process, one warm stdio session to the server: no Switchyard at all. */
  direct: Summary;
  /** An MCP client (v2 SDK, 2026-07-28) → /mcp → job of kind mcp → queue → worker → warm session. */
  gateway: Summary;
  /** POST /v1/jobs (batch of one call) → final status event (SSE). */
  jobApi: Summary;
  throughput: { clients: number; servers: number; calls: number; wallMs: number; perSecond: number };
}

function echoed(result: Record<string, unknown>, text: string): void {
  const content = result.content as Array<{ text?: string }> | undefined;
  if (result.isError || content?.[0]?.text !== text)
    throw new Error(`/mcp echo answered ${JSON.stringify(result).slice(0, 300)}`);
}

/**
 * The /mcp gateway: per-call latency of an echo through /mcp next to a direct MCP session and the job
 * API (taking turns in rounds), and calls/s of many MCP clients over several serialized servers.
 */
export function mcpGateway(options: McpGatewayOptions): Promise<McpGatewayResult> {
  return withScope(async (scope) => {
    const servers = Object.fromEntries(
      Array.from({ length: options.servers }, (_, index) => [
        `rec${index}`,
        exampleServer('recorder', { idempotent: ['echo'] }),
      ]),
    );
    const deployment = scope.add(
      new Deployment('bench-mcp', () => servers, {
        teams: { alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: 1000 } },
      }),
    );
    Object.assign(deployment.processEnv, BENCH_PROCESS_ENV);
    progress(
      `mcp gateway: starting 2 workers (${options.servers} servers), an orchestrator and a direct session`,
    );
    const [, , orchestrator, direct] = await all([
      deployment.startWorker({ id: 'w-mcp-1', timeoutMs: 180_000 }),
      deployment.startWorker({ id: 'w-mcp-2', timeoutMs: 180_000 }),
      deployment.startOrchestrator('o-bench-mcp'),
      WarmSession.open().then((session) => scope.add(session)),
    ]);
    const clients: GatewayClient[] = [];
    scope.add({ close: async () => void (await Promise.all(clients.map((client) => client.close()))) });
    const connect = async () => {
      const client = await connectGateway(orchestrator.url, TEAM_KEYS.alpha, '2026-07-28');
      clients.push(client);
      return client;
    };
    const gateway = await connect();
    const api = orchestrator.api('alpha');
    const ways = {
      direct: () => timed(() => direct.echo('x')),
      gateway: () =>
        timed(async () =>
          echoed(await gateway.callTool({ name: 'rec0__echo', arguments: { text: 'x' } }), 'x'),
        ),
      jobApi: () =>
        timed(async () => {
          const submitted = await api.submit({
            kind: 'batch',
            calls: [{ tool: 'rec0__echo', arguments: { text: 'x' } }],
          });
          const job = await api.finished(submitted.body.id, 60_000);
          if (job.status !== 'succeeded') throw new Error(`job API echo ended ${job.status}`);
        }),
    };
    progress(`mcp gateway: warming up (${options.warmup} calls each)`);
    for (const name of Object.keys(ways) as Array<keyof typeof ways>)
      for (let i = 0; i < options.warmup; i++) await ways[name]();
    const samples = await interleavedRounds(ways, options.rounds, () => options.perRound);

    progress(`mcp gateway: ${options.clients} MCP clients on ${options.servers} servers`);
    const many = await Promise.all(Array.from({ length: options.clients }, () => connect()));
    const start = performance.now();
    await Promise.all(
      many.map(async (client, index) => {
        const tool = `rec${index % options.servers}__echo`;
        for (let call = 0; call < options.callsPerClient; call++)
          echoed(await client.callTool({ name: tool, arguments: { text: `c${index}` } }), `c${index}`);
      }),
    );
    const wallMs = performance.now() - start;
    const calls = options.clients * options.callsPerClient;
    return {
      rounds: options.rounds,
      direct: summarize(samples.direct),
      gateway: summarize(samples.gateway),
      jobApi: summarize(samples.jobApi),
      throughput: {
        clients: options.clients,
        servers: options.servers,
        calls,
        wallMs,
        perSecond: (calls / wallMs) * 1000,
      },
    };
  });
}

type Table = (headers: string[], alignRight: boolean[], rows: string[][]) => string;

/** The gateway's part of the report. */
export function renderMcpGateway(result: McpGatewayResult, table: Table): string {
  const row = (path: string, summary: Summary) => [
    path,
    String(summary.n),
    ms(summary.p50),
    ms(summary.p99),
    ms(summary.mean),
    ratio(summary.p50, result.direct.p50),
  ];
  const { throughput } = result;
  return [
    `**The MCP gateway** (\`/mcp\`): one echo call at a time, the three paths taking turns over ${result.rounds} rounds; then ${throughput.clients} MCP clients (2026-07-28, v2 client SDK) calling ${throughput.servers} \`concurrency: 1\` servers at once (${throughput.calls / throughput.clients} calls each), 2 workers.`,
    table(
      ['path', 'calls', 'p50', 'p99', 'mean', 'p50 vs direct'],
      [false, true, true, true, true, true],
      [
        row('direct MCP session (MCP SDK `Client`, stdio, in process)', result.direct),
        row('MCP client → `/mcp` → job of kind `mcp` → queue → worker', result.gateway),
        row('job API: `POST /v1/jobs` batch of one call → final status event', result.jobApi),
      ],
    ),
    `${throughput.clients} MCP clients on ${throughput.servers} servers: ${throughput.calls} calls in ${ms(throughput.wallMs)}, ${perSecond(throughput.perSecond)}.`,
  ].join('\n\n');
}
