import { All, Controller, Inject, Req, Res } from '@nestjs/common';
import type { SwitchyardConfig } from '@switchyard/contracts';
import type { Request, Response } from 'express';
import { OPERATOR_KEY_READ_ONLY } from '../auth/key-refusal.ts';
import { TeamsService } from '../auth/teams.service.ts';
import { WithoutDependencyTimeout } from '../http/dependency-timeout.interceptor.ts';
import { JSON_RPC_CODES, jsonRpcError, jsonRpcId, refuseUnsafeJsonRpc } from '../http/json-rpc.ts';
import { MAX_REQUEST_DEPTH } from '../jobs/job-request.ts';
import { CONFIG } from '../runtime/tokens.ts';
import { GatewayCalls } from './gateway-calls.ts';
import { McpEndpoint } from './mcp-endpoint.ts';
import { headerMismatch } from './mcp-headers.ts';
import { originRefusal } from './origin-check.ts';

/** A JSON-RPC error body for a request refused before it reaches MCP, under the request's own id. */
function refusal(body: unknown, message: string, code: number = JSON_RPC_CODES.invalidRequest) {
  return jsonRpcError(jsonRpcId(body), code, message);
}

/**
 * `/mcp`: the fleet as one Streamable HTTP MCP server (docs/architecture.md, gateway). Refuses a foreign
 * browser `Origin` (403, origin-check.ts) before anything else, authenticates the team's API key (401 with `WWW-Authenticate: Bearer`), refuses bodies nested too deeply (400), checks
 * the Mcp-Method/Mcp-Name headers against the body, and hands the request to the MCP SDK's stateless
 * handler. Errors before it (malformed JSON, too large a body) are JSON-RPC errors too (HttpErrorsFilter).
 */
@Controller('mcp')
export class McpGatewayController {
  constructor(
    @Inject(TeamsService) private readonly teams: TeamsService,
    @Inject(McpEndpoint) private readonly endpoint: McpEndpoint,
    @Inject(GatewayCalls) private readonly calls: GatewayCalls,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
  ) {}

  // A tools/call holds its request open for as long as the tool runs; the call's own timeouts bound it.
  @WithoutDependencyTimeout()
  @All()
  async handle(@Req() request: Request, @Res() response: Response): Promise<void> {
    const foreign = originRefusal(request.headers, this.config.orchestrator.mcp.allowedOrigins);
    if (foreign) {
      response.status(403).json(refusal(request.body, foreign));
      return;
    }
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    const team = match?.[1] ? this.teams.byApiKey(match[1]) : undefined;
    // An operator key is known but acts for no team: /mcp submits calls, which operators may not.
    if (match?.[1] && !team && this.teams.isOperatorKey(match[1])) {
      response.status(403).json(refusal(request.body, OPERATOR_KEY_READ_ONLY));
      return;
    }
    if (!match?.[1] || !team) {
      response
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="switchyard"')
        .json(
          refusal(
            request.body,
            match?.[1] ? 'unknown API key' : 'missing "Authorization: Bearer <team API key>" header',
          ),
        );
      return;
    }
    // Deep or unstorable JSON is refused here as /v1 refuses it: the SDK would overflow its stack on it.
    const unsafe = refuseUnsafeJsonRpc(request.body, MAX_REQUEST_DEPTH);
    if (unsafe) {
      response.status(400).json(unsafe);
      return;
    }
    const mismatch = headerMismatch(request.headers, request.body);
    if (mismatch) {
      response.status(400).json(refusal(request.body, mismatch, JSON_RPC_CODES.headerMismatch));
      return;
    }
    const body = request.body as { method?: unknown; params?: { requestId?: unknown; reason?: unknown } };
    const requestId = body?.params?.requestId;
    if (
      body?.method === 'notifications/cancelled' &&
      (typeof requestId === 'string' || typeof requestId === 'number')
    ) {
      const reason = typeof body.params?.reason === 'string' ? body.params.reason : undefined;
      await this.calls.cancelByRequest(team, requestId, reason);
    }
    (request as Request & { auth?: unknown }).auth = {
      token: match[1],
      clientId: team.name,
      scopes: [],
    };
    await this.endpoint.node(request, response, request.body);
  }
}
