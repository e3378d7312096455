import { createHash } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { OAuthMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import express from 'express';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { HTTP_PATH, httpPort, httpSessions, listenAndAnnounce } from './serve.ts';

/**
 * An MCP server protected by OAuth, as the MCP authorization spec describes a resource server: it
 * publishes RFC 9728 protected-resource metadata naming its authorization server, refuses requests
 * without a valid bearer token (401 + WWW-Authenticate pointing at that metadata), and checks each token
 * by introspection (RFC 7662) at the authorization server, so a revoked token is refused at once.
 *
 * Usage: `protected --http <port>`, with AUTH_ISSUER, AUTH_CLIENT_ID / AUTH_CLIENT_SECRET (its own client,
 * for introspection), REQUEST_LEDGER (every request: JSON-RPC method, label, the identity the token
 * belongs to, a digest of the token — never the token) and CALL_LEDGER (every call that ran).
 * RESOURCE_METADATA_PATH (e.g. `/custom/prm.json`) publishes the protected-resource metadata at that path
 * only, as RFC 9728 allows: no well-known URL has it, and only the 401's `resource_metadata` leads there.
 */
export function createProtectedServer(): McpServer {
  const server = new McpServer({ name: 'protected', version: '0.1.0' });
  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description:
        'Records the call under the identity of the token it came with, and returns that identity.',
      inputSchema: { label: z.string().describe('Free-form tag copied into the record') },
      annotations: {
        readOnlyHint: false,
        idempotentHint: false,
        destructiveHint: false,
        openWorldHint: false,
      },
    },
    ({ label }, extra) => {
      const identity = extra.authInfo?.clientId ?? 'anonymous';
      appendLedger(process.env.CALL_LEDGER, { tool: 'whoami', label, identity });
      return { content: [{ type: 'text', text: identity }], structuredContent: { identity } };
    },
  );
  return server;
}

/** Token introspection at the authorization server, authenticated as this server's own client. */
function introspectingVerifier(endpoint: string, clientId: string, clientSecret: string): OAuthTokenVerifier {
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString(
    'base64',
  );
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      if (!response.ok) throw new Error(`introspection failed: HTTP ${response.status}`);
      const answer = (await response.json()) as {
        active: boolean;
        client_id?: string;
        scope?: string;
        exp?: number;
        aud?: string;
      };
      if (!answer.active || !answer.client_id) throw new InvalidTokenError('the token is not active');
      return {
        token,
        clientId: answer.client_id,
        scopes: answer.scope ? answer.scope.split(' ') : [],
        ...(answer.exp !== undefined ? { expiresAt: answer.exp } : {}),
        ...(answer.aud ? { resource: new URL(answer.aud) } : {}),
      };
    },
  };
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

async function main(): Promise<void> {
  const port = httpPort(process.argv.slice(2), process.env.MCP_HTTP_PORT);
  if (!port) throw new Error('the protected server needs a fixed --http port (its resource URL)');
  const { AUTH_ISSUER: issuer, AUTH_CLIENT_ID: clientId, AUTH_CLIENT_SECRET: clientSecret } = process.env;
  if (!issuer || !clientId || !clientSecret) {
    throw new Error('AUTH_ISSUER, AUTH_CLIENT_ID and AUTH_CLIENT_SECRET must be set');
  }
  const resourceUrl = new URL(`http://127.0.0.1:${port}${HTTP_PATH}`);
  const metadataResponse = await fetch(new URL('/.well-known/oauth-authorization-server', issuer));
  const oauthMetadata = OAuthMetadataSchema.parse(await metadataResponse.json());
  if (!oauthMetadata.introspection_endpoint)
    throw new Error('the authorization server has no introspection endpoint');

  const sessions = httpSessions(createProtectedServer);
  const app = express();
  const customMetadataPath = process.env.RESOURCE_METADATA_PATH;
  let resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(resourceUrl);
  if (customMetadataPath) {
    resourceMetadataUrl = new URL(customMetadataPath, resourceUrl).href;
    app.get(customMetadataPath, (_req, res) => {
      res.json({ resource: resourceUrl.href, authorization_servers: [issuer], scopes_supported: ['tools'] });
    });
  } else {
    app.use(
      mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: resourceUrl, scopesSupported: ['tools'] }),
    );
  }
  app.use(HTTP_PATH, express.json(), (req, res, next) => {
    // Logged once answered, so the log shows what the bearer check decided.
    const body = req.body as { method?: string; params?: { arguments?: { label?: unknown } } } | undefined;
    const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    res.on('finish', () =>
      appendLedger(process.env.REQUEST_LEDGER, {
        http: req.method,
        method: body?.method,
        label: body?.params?.arguments?.label,
        status: res.statusCode,
        identity: req.auth?.clientId,
        token: token ? digest(token) : undefined,
      }),
    );
    next();
  });
  app.use(
    HTTP_PATH,
    requireBearerAuth({
      verifier: introspectingVerifier(oauthMetadata.introspection_endpoint, clientId, clientSecret),
      resourceMetadataUrl,
      expectedResource: resourceUrl,
    }),
  );
  app.all(HTTP_PATH, (req, res) => {
    sessions.route(req, res, req.body).catch((error: unknown) => {
      process.stderr.write(`request failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      if (!res.headersSent) res.status(500).end();
    });
  });

  await listenAndAnnounce(createHttpServer(app), port, () => sessions.close());
}

main().catch((error: unknown) => {
  process.stderr.write(
    `failed to start the protected MCP server: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
