import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { appendLedger, type LedgerRecord, readLedger } from './ledger.ts';
import { traceparentOf } from './meta.ts';
import { isMain, serve } from './serve.ts';

/**
 * A note store whose writes are deliberately NOT idempotent: calling add_note twice adds two
 * notes. The ledger (NOTES_LEDGER) is both the store and the evidence tests read to tell
 * whether a retried call ran twice, or a killed caller left a 'start' without its 'done'.
 */
export function createNotesServer(): McpServer {
  const store = ledgerStore(process.env.NOTES_LEDGER);
  const server = new McpServer({ name: 'notes', version: '0.1.0' });

  server.registerTool(
    'add_note',
    {
      title: 'Add a note',
      description:
        'Stores a new note and returns its id. Not idempotent: every call creates another note. delayMs holds the call open before the write completes.',
      inputSchema: {
        text: z.string().min(1).describe('Note text'),
        delayMs: z
          .number()
          .int()
          .min(0)
          .max(60_000)
          .optional()
          .describe('Wait this long between start and done'),
      },
      outputSchema: { id: z.string() },
      annotations: {
        readOnlyHint: false,
        idempotentHint: false,
        destructiveHint: false,
        openWorldHint: false,
      },
    },
    async (args, extra) => {
      const traceparent = traceparentOf(extra);
      store.append({ tool: 'add_note', phase: 'start', text: args.text, traceparent });
      // Not tied to extra.signal on purpose: like many real write APIs, a call the client gave
      // up on may still complete, and the ledger records what actually happened.
      if (args.delayMs) await delay(args.delayMs);
      const id = randomUUID();
      store.append({ tool: 'add_note', phase: 'done', text: args.text, id, traceparent });
      return { content: [{ type: 'text', text: id }], structuredContent: { id } };
    },
  );

  server.registerTool(
    'list_notes',
    {
      title: 'List notes',
      description: 'Lists every note that was added (by any process sharing the ledger) and not deleted.',
      inputSchema: {},
      outputSchema: { notes: z.array(z.object({ id: z.string(), text: z.string() })) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => {
      const notes = liveNotes(store.read());
      const text = notes.length ? notes.map((note) => `${note.id}\t${note.text}`).join('\n') : 'No notes.';
      return { content: [{ type: 'text', text }], structuredContent: { notes } };
    },
  );

  server.registerTool(
    'delete_note',
    {
      title: 'Delete a note',
      description: 'Deletes the note with the given id; fails when no such note exists.',
      inputSchema: { id: z.string().min(1).describe('Id returned by add_note') },
      outputSchema: { id: z.string(), deleted: z.boolean() },
      annotations: {
        readOnlyHint: false,
        idempotentHint: false,
        destructiveHint: true,
        openWorldHint: false,
      },
    },
    (args, extra) => {
      if (!liveNotes(store.read()).some((note) => note.id === args.id)) {
        return { isError: true, content: [{ type: 'text', text: `Note not found: "${args.id}".` }] };
      }
      store.append({ tool: 'delete_note', id: args.id, traceparent: traceparentOf(extra) });
      return {
        content: [{ type: 'text', text: `Deleted ${args.id}.` }],
        structuredContent: { id: args.id, deleted: true },
      };
    },
  );

  return server;
}

interface Note {
  id: string;
  text: string;
}

/** Notes completed by add_note (phase 'done') minus those deleted since, in creation order. */
function liveNotes(records: LedgerRecord[]): Note[] {
  const notes = new Map<string, Note>();
  for (const record of records) {
    const { tool, phase, id, text } = record;
    if (typeof id !== 'string') continue;
    if (tool === 'add_note' && phase === 'done' && typeof text === 'string') notes.set(id, { id, text });
    else if (tool === 'delete_note') notes.delete(id);
  }
  return [...notes.values()];
}

/** The ledger file when NOTES_LEDGER is set; otherwise this process's memory, so the demo still works. */
function ledgerStore(path: string | undefined) {
  const memory: LedgerRecord[] = [];
  return {
    append(record: LedgerRecord): void {
      if (path) appendLedger(path, record);
      else memory.push({ ...record, pid: process.pid, time: new Date().toISOString() });
    },
    read(): LedgerRecord[] {
      return path ? readLedger(path) : memory;
    },
  };
}

if (isMain(import.meta.url)) await serve(createNotesServer);
