import { randomUUID } from 'node:crypto';
import { inputRequired, inputResponse, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { isMain } from './serve.ts';
import { serveModern } from './serve-modern.ts';

const Confirmation = z.object({
  confirm: z.boolean().describe('Confirm the transfer'),
  memo: z.string().max(100).optional().describe('Memo'),
});

/**
 * The teller on MCP 2026-07-28 only (v2 server SDK): `transfer` asks its question by answering
 * `tools/call` with an `input_required` result, and finishes when the call comes back with
 * `inputResponses`. TELLER_LEDGER gets `asked` each time it asks, the person's `decline`/`cancel`,
 * and `done` once the money moved.
 */
export function createModernTellerServer(): McpServer {
  const ledger = process.env.TELLER_LEDGER;
  const server = new McpServer({ name: 'teller-modern', version: '0.1.0' }, { capabilities: { tools: {} } });

  server.registerTool(
    'transfer',
    {
      title: 'Transfer money',
      description:
        'Transfers an amount after a person confirms it (form question: confirm, memo). Not idempotent.',
      inputSchema: z.object({ to: z.string().min(1), amount: z.number().positive() }),
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
    },
    ({ to, amount }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
      if (answer.kind !== 'elicit') {
        appendLedger(ledger, { tool: 'transfer', phase: 'asked', to, amount });
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Confirm the transfer of ${amount} to ${to}`,
              requestedSchema: Confirmation,
            }),
          },
        });
      }
      const content = Confirmation.safeParse(answer.content);
      if (answer.action !== 'accept' || !content.success || !content.data.confirm) {
        appendLedger(ledger, { tool: 'transfer', phase: answer.action, to });
        return {
          content: [
            { type: 'text', text: `The transfer to ${to} was not made: the person chose ${answer.action}.` },
          ],
        };
      }
      const id = randomUUID();
      appendLedger(ledger, { tool: 'transfer', phase: 'done', to, amount, id, memo: content.data.memo });
      return { content: [{ type: 'text', text: `Transferred ${amount} to ${to} (${id}).` }] };
    },
  );

  return server;
}

if (isMain(import.meta.url)) await serveModern(() => createModernTellerServer());
