import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { isMain, serve } from './serve.ts';

/**
 * A stdio server that needs a per-team secret in its environment (TEAM_IDENTITY), as a server holding a
 * team's API key would. `whoami` records and returns whose environment the process was started with and
 * its pid, so tests see which process served which team. TEAM_IDENTITY=broken fails at start-up.
 */
export function createTeamEnvServer(): McpServer {
  const server = new McpServer({ name: 'team-env', version: '0.1.0' });
  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description: 'Returns the team this process was started for.',
      inputSchema: { label: z.string().describe('Free-form tag copied into the record') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ label }) => {
      const identity = process.env.TEAM_IDENTITY ?? 'none';
      appendLedger(process.env.TEAM_ENV_LEDGER, { label, identity });
      return {
        content: [{ type: 'text', text: identity }],
        structuredContent: { identity, pid: process.pid },
      };
    },
  );
  return server;
}

if (isMain(import.meta.url)) {
  if (process.env.TEAM_IDENTITY === 'broken') {
    process.stderr.write('TEAM_IDENTITY is not a valid credential\n');
    process.exit(1);
  }
  await serve(createTeamEnvServer);
}
