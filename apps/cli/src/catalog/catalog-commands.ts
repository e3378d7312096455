import type { Command } from 'commander';
import type { Act } from '../action.ts';
import { EXIT } from '../exit-codes.ts';
import type { Output } from '../output/output.ts';
import { serversTable, toolsTable } from './catalog-tables.ts';

/** `switchyard tools` and `switchyard servers`. */
export function addCatalogCommands(program: Command, act: Act, out: Output): void {
  program
    .command('tools')
    .description("the tools this team's jobs may call")
    .action(
      act(async (client) => {
        const list = await client.listTools();
        out.result(list, () => toolsTable(list));
        return EXIT.ok;
      }),
    );

  program
    .command('servers')
    .description('the MCP servers behind the tools: availability, sessions, queues')
    .action(
      act(async (client) => {
        const list = await client.listServers();
        out.result(list, () => serversTable(list));
        return EXIT.ok;
      }),
    );
}
