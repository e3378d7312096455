/**
 * Only the /mcp gateway scenario of `npm run bench`, printed (nothing is written): for working on the
 * gateway without running the whole benchmark. After `npm run build`:
 * `SWITCHYARD_COMPILED=1 node --conditions=@switchyard/source --import tsx test/bench/mcp-gateway-bench.ts`
 */
import { EventEmitter } from 'node:events';
import { closeEverything, progress } from './harness.ts';
import { table } from './report.ts';
import { MCP_GATEWAY_SETTINGS, mcpGateway, renderMcpGateway } from './scenarios/mcp-gateway.ts';

// As in bench.ts: a worker serving ten servers waits for each with its own exit listener.
EventEmitter.defaultMaxListeners = 64;

mcpGateway(MCP_GATEWAY_SETTINGS).then(
  (result) => {
    process.stdout.write(`${renderMcpGateway(result, table)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    progress(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void closeEverything().finally(() => process.exit(1));
  },
);
