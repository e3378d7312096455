/** What `npm run dev` prints once everything is up: where to go, with which key, on which stores. */
export interface DevDeployment {
  baseUrl: string;
  apiKey: string;
  team: string;
  keyFromEnv: boolean;
  stores: string[];
  worker: { id: string; servers: string[] };
  logs: string[];
}

export function readyBanner(deployment: DevDeployment): string {
  const { baseUrl } = deployment;
  const key = deployment.keyFromEnv
    ? `(team ${deployment.team}, from SWITCHYARD_DEMO_KEY)`
    : `(team ${deployment.team}; a new one every start unless SWITCHYARD_DEMO_KEY is set)`;
  return [
    '',
    `  API:        ${baseUrl}/v1 (reference: ${baseUrl}/docs)`,
    `  Console:    ${baseUrl}/console/`,
    `  MCP:        ${baseUrl}/mcp (Streamable HTTP, the API key as bearer token)`,
    `  API key:    ${deployment.apiKey} ${key}`,
    `  Worker:     ${deployment.worker.id} on ${deployment.worker.servers.join(', ')}`,
    ...deployment.stores.map((line) => `  ${line}`),
    `  Logs:       ${deployment.logs.join(', ')}`,
    '',
    'Ready: Ctrl-C stops everything.',
  ].join('\n');
}
