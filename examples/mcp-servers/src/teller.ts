import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { isMain, serve } from './serve.ts';

/**
 * A bank teller that asks a person before it moves money (MCP elicitation, revision 2025-11-25 and
 * older: the server sends `elicitation/create` mid-call). Every step goes to TELLER_LEDGER, so tests
 * see how often a tool ran up to its question (`asked`) and how often the side effect happened (`done`).
 */
export function createTellerServer(): McpServer {
  const ledger = process.env.TELLER_LEDGER;
  const server = new McpServer({ name: 'teller', version: '0.1.0' });

  server.registerTool(
    'transfer',
    {
      title: 'Transfer money',
      description:
        'Transfers an amount to an account after a person confirms it (form question: confirm, memo). Not idempotent.',
      inputSchema: { to: z.string().min(1), amount: z.number().positive() },
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
    },
    async (args, extra) => {
      appendLedger(ledger, { tool: 'transfer', phase: 'asked', to: args.to, amount: args.amount });
      const answer = await server.server.elicitInput(
        {
          mode: 'form',
          message: `Confirm the transfer of ${args.amount} to ${args.to}`,
          requestedSchema: {
            type: 'object',
            properties: {
              confirm: { type: 'boolean', title: 'Confirm the transfer' },
              memo: { type: 'string', title: 'Memo', maxLength: 100 },
            },
            required: ['confirm'],
          },
        },
        { relatedRequestId: extra.requestId },
      );
      if (answer.action !== 'accept' || answer.content?.confirm !== true) {
        appendLedger(ledger, { tool: 'transfer', phase: answer.action, to: args.to });
        return {
          content: [
            {
              type: 'text',
              text: `The transfer to ${args.to} was not made: the person chose ${answer.action}.`,
            },
          ],
        };
      }
      const id = randomUUID();
      const memo = typeof answer.content.memo === 'string' ? answer.content.memo : undefined;
      appendLedger(ledger, { tool: 'transfer', phase: 'done', to: args.to, amount: args.amount, id, memo });
      return { content: [{ type: 'text', text: `Transferred ${args.amount} to ${args.to} (${id}).` }] };
    },
  );

  server.registerTool(
    'statement',
    {
      title: 'Send an account statement',
      description:
        'Sends a statement after asking how (form question whose every field has a default: format, months). Read-only.',
      inputSchema: { account: z.string().min(1) },
      annotations: { readOnlyHint: true },
    },
    async (args, extra) => {
      appendLedger(ledger, { tool: 'statement', phase: 'asked', account: args.account });
      const answer = await server.server.elicitInput(
        {
          mode: 'form',
          message: `How should the statement of ${args.account} be sent?`,
          requestedSchema: {
            type: 'object',
            properties: {
              format: { type: 'string', title: 'Format', enum: ['pdf', 'csv'], default: 'pdf' },
              months: { type: 'integer', title: 'Months', minimum: 1, maximum: 24, default: 3 },
            },
            required: ['months'],
          },
        },
        { relatedRequestId: extra.requestId },
      );
      if (answer.action !== 'accept') {
        return { content: [{ type: 'text', text: `No statement: the person chose ${answer.action}.` }] };
      }
      const { format, months } = answer.content ?? {};
      appendLedger(ledger, { tool: 'statement', phase: 'done', account: args.account, format, months });
      return {
        content: [
          {
            type: 'text',
            text: `Statement of ${args.account}: ${String(months)} months as ${String(format)}.`,
          },
        ],
      };
    },
  );

  server.registerTool(
    'link_account',
    {
      title: 'Link an external account',
      description: 'Links an account at another bank; the person signs in there (URL question).',
      inputSchema: { bank: z.string().min(1) },
      annotations: { readOnlyHint: false, idempotentHint: true },
    },
    async (args, extra) => {
      const elicitationId = `link-${args.bank}`;
      appendLedger(ledger, { tool: 'link_account', phase: 'asked', bank: args.bank });
      const answer = await server.server.elicitInput(
        {
          mode: 'url',
          message: `Sign in at ${args.bank} to link the account`,
          url: `https://example.com/link/${encodeURIComponent(args.bank)}`,
          elicitationId,
        },
        { relatedRequestId: extra.requestId },
      );
      if (answer.action !== 'accept') {
        return { content: [{ type: 'text', text: `Not linked: the person chose ${answer.action}.` }] };
      }
      appendLedger(ledger, { tool: 'link_account', phase: 'done', bank: args.bank });
      return { content: [{ type: 'text', text: `Linked the account at ${args.bank}.` }] };
    },
  );

  server.registerTool(
    'close_account',
    {
      title: 'Close an account',
      description: 'Closes an account for good. Destructive.',
      inputSchema: { account: z.string().min(1) },
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true },
    },
    (args) => {
      appendLedger(ledger, { tool: 'close_account', phase: 'done', account: args.account });
      return { content: [{ type: 'text', text: `Closed account ${args.account}.` }] };
    },
  );

  return server;
}

if (isMain(import.meta.url)) await serve(createTellerServer);
