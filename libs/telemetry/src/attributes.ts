/**
 * Every span attribute name Switchyard sets, in one place so the apps cannot drift apart. Standard names
 * follow the OpenTelemetry semantic conventions (GenAI, MCP, messaging); `switchyard.*` are our own.
 */
export const ATTR = {
  ERROR_TYPE: 'error.type',
  HTTP_ROUTE: 'http.route',
  SERVER_ADDRESS: 'server.address',
  NETWORK_TRANSPORT: 'network.transport',

  GEN_AI_OPERATION_NAME: 'gen_ai.operation.name',
  GEN_AI_AGENT_NAME: 'gen_ai.agent.name',
  GEN_AI_CONVERSATION_ID: 'gen_ai.conversation.id',
  GEN_AI_PROVIDER_NAME: 'gen_ai.provider.name',
  GEN_AI_REQUEST_MODEL: 'gen_ai.request.model',
  GEN_AI_USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  GEN_AI_USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  GEN_AI_TOOL_NAME: 'gen_ai.tool.name',
  GEN_AI_TOOL_CALL_ID: 'gen_ai.tool.call.id',

  MCP_METHOD_NAME: 'mcp.method.name',
  MCP_PROTOCOL_VERSION: 'mcp.protocol.version',
  MCP_SESSION_ID: 'mcp.session.id',

  MESSAGING_SYSTEM: 'messaging.system',
  MESSAGING_OPERATION_TYPE: 'messaging.operation.type',
  MESSAGING_DESTINATION_NAME: 'messaging.destination.name',
  MESSAGING_MESSAGE_ID: 'messaging.message.id',

  JOB_ID: 'switchyard.job.id',
  JOB_KIND: 'switchyard.job.kind',
  TEAM: 'switchyard.team',
  REPLICA: 'switchyard.replica',
  SERVER: 'switchyard.server',
  STEP: 'switchyard.step',
  GRAPH_NODE: 'switchyard.graph.node',
  TOOL_CALLS: 'switchyard.tool_calls',
  TOOL_CALL_ID: 'switchyard.tool_call.id',
  /** Attempts that reached the server so far, on a call's spans and on its outcome. */
  ATTEMPTS: 'switchyard.attempts',
  REDELIVERY: 'switchyard.redelivery',
  OUTCOME_STATUS: 'switchyard.outcome.status',
  OUTCOME_EXECUTED: 'switchyard.outcome.executed',
  /** The PostgreSQL queries a span made while their own `pg.query` spans were folded (tracing.ts). */
  PG_QUERIES: 'switchyard.pg.queries',
  /** Their summed duration, ms. */
  PG_QUERY_MS: 'switchyard.pg.query_ms',
} as const;
