import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { CORPUS, type Doc } from './corpus.ts';
import { appendLedger } from './ledger.ts';
import { traceparentOf } from './meta.ts';
import { isMain, serve } from './serve.ts';

export interface Hit {
  id: string;
  title: string;
  score: number;
}

/** A read-only full-text search over a small built-in corpus (queues, MCP, tracing). */
export function createSearchServer(): McpServer {
  const ledger = process.env.SEARCH_LEDGER;
  const server = new McpServer({ name: 'search', version: '0.1.0' });

  server.registerTool(
    'search',
    {
      title: 'Search documents',
      description:
        'Full-text search over a built-in corpus of short documents about message queues, MCP and tracing. Returns the best matching document ids with a relevance score.',
      inputSchema: {
        query: z.string().min(1).describe('Words to look for'),
        limit: z.number().int().min(1).max(20).default(5).describe('Maximum number of hits'),
      },
      outputSchema: {
        hits: z.array(z.object({ id: z.string(), title: z.string(), score: z.number() })),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) => {
      appendLedger(ledger, { tool: 'search', arguments: args, traceparent: traceparentOf(extra) });
      const hits = rank(args.query).slice(0, args.limit);
      const text = hits.length
        ? hits.map((hit) => `${hit.id}\t${hit.title}\t(score ${hit.score})`).join('\n')
        : `No document matches "${args.query}".`;
      return { content: [{ type: 'text', text }], structuredContent: { hits } };
    },
  );

  server.registerTool(
    'get_document',
    {
      title: 'Get a document',
      description: 'Returns the full document with the given id (ids come from the search tool).',
      inputSchema: { id: z.string().min(1).describe('Document id, e.g. "mcp-overview"') },
      outputSchema: { id: z.string(), title: z.string(), body: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) => {
      appendLedger(ledger, { tool: 'get_document', arguments: args, traceparent: traceparentOf(extra) });
      const doc = CORPUS.find((candidate) => candidate.id === args.id);
      if (!doc) {
        return {
          isError: true,
          content: [
            { type: 'text', text: `Document not found: "${args.id}". Use the search tool to find ids.` },
          ],
        };
      }
      return {
        content: [{ type: 'text', text: `# ${doc.title}\n\n${doc.body}` }],
        structuredContent: { id: doc.id, title: doc.title, body: doc.body },
      };
    },
  );

  return server;
}

/**
 * Scores each document by how many of its words start with a query term, title words
 * counting double; ties are broken by id so the order is stable.
 */
export function rank(query: string): Hit[] {
  const terms = [...new Set(words(query))].filter((term) => term.length >= 2);
  if (!terms.length) return [];
  const hits: Hit[] = [];
  for (const doc of CORPUS) {
    const raw = terms.reduce((sum, term) => sum + termScore(doc, term), 0);
    if (raw > 0)
      hits.push({ id: doc.id, title: doc.title, score: Math.round((raw / terms.length) * 1000) / 1000 });
  }
  return hits.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

function termScore(doc: Doc, term: string): number {
  const count = (text: string) => words(text).filter((word) => word.startsWith(term)).length;
  return 2 * count(doc.title) + count(doc.body);
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

if (isMain(import.meta.url)) await serve(createSearchServer);
