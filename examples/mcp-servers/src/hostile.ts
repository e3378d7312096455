import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';

/**
 * A DELIBERATELY misbehaving MCP server, to test what a client does with bytes a well-behaved server
 * never sends. It speaks newline-delimited JSON-RPC over stdio by hand (not through the SDK's server,
 * which would refuse to write most of this): results bigger than the client's read buffer, invalid
 * UTF-8, NUL characters and lone surrogates, lines that are not JSON, results of the wrong shape,
 * JSON-RPC errors, and requests it never answers. `HOSTILE_HANDSHAKE=never` makes it ignore
 * `initialize` too. It exits when stdin closes.
 */

type Id = string | number;
interface Message {
  jsonrpc?: unknown;
  id?: Id | null;
  method?: unknown;
  params?: Record<string, unknown>;
}

const SERVER_INFO = { name: 'hostile', version: '0.1.0' };
/** The largest `blob` it makes; more than the SDK's stdio read buffer, on purpose. */
const MAX_BLOB_BYTES = 20 * 1024 * 1024;
/** One line this long overflows the client's read buffer (the SDK's default, 10 MiB). */
const HUGE_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE + 1024 * 1024;

const noArguments = { type: 'object', properties: {}, additionalProperties: false };

const TOOLS = [
  {
    name: 'blob',
    description: `Returns a valid result whose text is exactly \`bytes\` bytes long (at most ${MAX_BLOB_BYTES}).`,
    inputSchema: {
      type: 'object',
      properties: { bytes: { type: 'integer', minimum: 0, maximum: MAX_BLOB_BYTES } },
      required: ['bytes'],
      additionalProperties: false,
    },
  },
  {
    name: 'bad_utf8',
    description: 'Returns a result whose text contains raw bytes that are not valid UTF-8 (0xff 0xfe).',
    inputSchema: noArguments,
  },
  {
    name: 'nul_text',
    description:
      'Returns legal JSON text that holds a NUL character (\\u0000) and a lone surrogate (\\ud800), which PostgreSQL jsonb refuses.',
    inputSchema: noArguments,
  },
  {
    name: 'garbage_then_answer',
    description:
      'Writes a line that is not JSON, a JSON line that is not JSON-RPC and a response nobody asked for, then the real result.',
    inputSchema: noArguments,
  },
  {
    name: 'wrong_shape',
    description: 'Answers with a "result" whose content is a string instead of an array of content blocks.',
    inputSchema: noArguments,
  },
  {
    name: 'error_object',
    description: 'Answers with a JSON-RPC error response (code -32603).',
    inputSchema: noArguments,
  },
  {
    name: 'never_answers',
    description: 'Never answers; notifications/cancelled is ignored.',
    inputSchema: noArguments,
  },
  {
    name: 'deep_structured',
    description: 'Answers with structuredContent nested `depth` objects deep (default 5000).',
    inputSchema: {
      type: 'object',
      properties: { depth: { type: 'integer', minimum: 1, maximum: 100_000 } },
      additionalProperties: false,
    },
  },
  {
    name: 'fat_result',
    description:
      'Answers with a result whose bulk is not text: a 5 MB _meta on a text block, an image with 1 MB of annotations, 1 MB of structuredContent and 20,000 small resource_link blocks (8 MB in all, under the stdio read buffer).',
    inputSchema: noArguments,
  },
  {
    name: 'text_blocks',
    description:
      'Returns `count` text blocks of `bytes` bytes each (at most 16 blocks, 20 MB in all): a result far above any maxResultBytes, in text only.',
    inputSchema: {
      type: 'object',
      properties: {
        count: { type: 'integer', minimum: 1, maximum: 16 },
        bytes: { type: 'integer', minimum: 0, maximum: MAX_BLOB_BYTES },
      },
      required: ['count', 'bytes'],
      additionalProperties: false,
    },
  },
  {
    name: 'huge_line',
    description: `Answers with one JSON line of ${HUGE_LINE_BYTES} bytes, more than the SDK client's stdio read buffer.`,
    inputSchema: noArguments,
  },
];

const write = (data: string | Buffer): void => {
  process.stdout.write(data);
};
const send = (message: object): void => write(`${JSON.stringify(message)}\n`);
const result = (id: Id, value: object): void => send({ jsonrpc: '2.0', id, result: value });
const error = (id: Id, code: number, message: string): void =>
  send({ jsonrpc: '2.0', id, error: { code, message } });
const textResult = (text: string) => ({ content: [{ type: 'text', text }] });

function callTool(id: Id, params: Record<string, unknown>): void {
  const name = params.name;
  const args = (params.arguments ?? {}) as Record<string, unknown>;
  switch (name) {
    case 'blob': {
      const bytes = args.bytes;
      if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 0 || bytes > MAX_BLOB_BYTES) {
        error(id, -32602, `blob: "bytes" must be an integer from 0 to ${MAX_BLOB_BYTES}`);
        return;
      }
      result(id, textResult(pattern(bytes)));
      return;
    }
    case 'text_blocks': {
      const { count, bytes } = args;
      const fits = (value: unknown, max: number) =>
        typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max;
      if (
        !fits(count, 16) ||
        !fits(bytes, MAX_BLOB_BYTES) ||
        (count as number) * (bytes as number) > MAX_BLOB_BYTES
      ) {
        error(id, -32602, `text_blocks: "count" (1–16) × "bytes" must be at most ${MAX_BLOB_BYTES}`);
        return;
      }
      const text = pattern(bytes as number);
      result(id, { content: Array.from({ length: count as number }, () => ({ type: 'text', text })) });
      return;
    }
    case 'bad_utf8': {
      // Built as bytes: JSON.stringify would never produce these.
      const [head, tail] = JSON.stringify({
        jsonrpc: '2.0',
        id,
        result: { content: [{ type: 'text', text: 'before|after' }] },
      }).split('|') as [string, string];
      write(Buffer.concat([Buffer.from(head), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(`${tail}\n`)]));
      return;
    }
    case 'nul_text':
      // JSON.stringify escapes both (\u0000, \ud800): valid JSON, but not text every store accepts.
      result(id, textResult('nul:\u0000 lone surrogate:\ud800 end'));
      return;
    case 'garbage_then_answer':
      write('this is not JSON {{{ \u0007\n');
      write('{"hello":"a JSON line that is not JSON-RPC"}\n');
      send({ jsonrpc: '2.0', id: 'nobody-asked', result: { content: [] } });
      result(id, textResult('answered after the garbage'));
      return;
    case 'wrong_shape':
      result(id, { content: 'nope' });
      return;
    case 'error_object':
      error(id, -32603, 'hostile: internal failure on purpose');
      return;
    case 'never_answers':
      return;
    case 'huge_line':
      result(id, textResult(pattern(HUGE_LINE_BYTES)));
      return;
    case 'deep_structured': {
      const depth = typeof args.depth === 'number' ? args.depth : 5_000;
      // Written as text: building the value would be as deep as what it tests.
      const deep = `${'{"next":'.repeat(depth)}"bottom"${'}'.repeat(depth)}`;
      write(
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"deep"}],"structuredContent":${deep}}}\n`,
      );
      return;
    }
    case 'fat_result':
      result(id, {
        content: [
          { type: 'text', text: 'fat result', _meta: { blob: 'm'.repeat(5 * 1024 * 1024) } },
          {
            type: 'image',
            data: 'AAAA',
            mimeType: 'image/png',
            annotations: { audience: ['user'], note: 'a'.repeat(1024 * 1024) },
          },
          ...Array.from({ length: 20_000 }, (_, index) => ({
            type: 'resource_link',
            uri: `file:///fat/${index}`,
            name: `item ${index}`,
          })),
        ],
        structuredContent: { rows: 'r'.repeat(1024 * 1024) },
      });
      return;
    default:
      error(id, -32602, `Unknown tool: ${String(name)}`);
  }
}

/** `bytes` bytes of readable ASCII. */
function pattern(bytes: number): string {
  const unit = 'hostile-blob-0123456789abcdef\n';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

function handle(message: Message): void {
  const { id, method } = message;
  const params = message.params ?? {};
  const isRequest = id !== undefined && id !== null;
  switch (method) {
    case 'initialize':
      if (process.env.HOSTILE_HANDSHAKE === 'never' || !isRequest) return;
      result(id, {
        protocolVersion: params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: SERVER_INFO,
      });
      return;
    case 'ping':
      if (isRequest) result(id, {});
      return;
    case 'tools/list':
      if (isRequest) result(id, { tools: TOOLS });
      return;
    case 'tools/call':
      if (isRequest) callTool(id, params);
      return;
    default:
      // Notifications (initialized, cancelled, ...) are ignored; unknown requests get the standard error.
      if (isRequest) error(id, -32601, `Method not found: ${String(method)}`);
  }
}

let buffered = Buffer.alloc(0);
process.stdin.on('data', (chunk: Buffer) => {
  buffered = Buffer.concat([buffered, chunk]);
  let end = buffered.indexOf('\n');
  while (end >= 0) {
    const line = buffered.subarray(0, end).toString('utf8').trim();
    buffered = buffered.subarray(end + 1);
    end = buffered.indexOf('\n');
    if (!line) continue;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      continue; // a hostile server has no manners: garbage in, nothing out
    }
    if (message && typeof message === 'object' && !Array.isArray(message)) handle(message as Message);
  }
});
// The client owns our lifetime: when it closes stdin (or dies), exit. EPIPE means the same.
const exitNow = () => process.exit(0);
process.stdin.once('end', exitNow);
process.stdin.once('close', exitNow);
process.stdout.on('error', exitNow);
process.once('SIGTERM', exitNow);
process.once('SIGINT', exitNow);
