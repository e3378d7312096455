import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type ServerName = 'search' | 'notes' | 'slow' | 'recorder' | 'crashy';

/** The repo root: tsx must resolve from there, as the tool worker will run it. */
export const ROOT = resolve(import.meta.dirname, '../../..');

export function serverPath(name: ServerName): string {
  return resolve(import.meta.dirname, '../src', `${name}.ts`);
}

export function serverArgs(name: ServerName, extra: string[] = []): string[] {
  return ['--import', 'tsx', serverPath(name), ...extra];
}

/**
 * Collects teardown steps so every spawned process and temp dir is released in afterEach,
 * whether or not the test failed. Steps run newest first (clients before their servers).
 */
export class Resources {
  private readonly steps: Array<() => Promise<void> | void> = [];

  defer(step: () => Promise<void> | void): void {
    this.steps.push(step);
  }

  async release(): Promise<void> {
    const steps = this.steps.splice(0).reverse();
    const results = await Promise.allSettled(steps.map(async (step) => step()));
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  }

  tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-servers-test-'));
    this.defer(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  /** Spawns the server over stdio (as a tool worker does) and connects a real SDK client. */
  async stdioClient(name: ServerName, env: Record<string, string> = {}) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: serverArgs(name),
      cwd: ROOT,
      env,
      stderr: 'inherit',
    });
    const client = new Client({ name: 'servers-test', version: '0.0.0' });
    // close() ends stdin, then escalates to SIGTERM/SIGKILL, so the child never outlives the test.
    this.defer(() => client.close());
    await client.connect(transport);
    return { client, transport };
  }

  /** Spawns the server in HTTP mode and waits for its one `listening` line on stdout. */
  async httpServer(name: ServerName, options: { args?: string[]; env?: Record<string, string> } = {}) {
    const child = spawn(process.execPath, serverArgs(name, options.args ?? ['--http', '0']), {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.defer(async () => {
      await stop(child);
    });
    const lines = createInterface({ input: child.stdout });
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`${name} exited with ${String(code)} before listening`);
    });
    // Only the race observes `exited`; the exit at teardown must not become an unhandled rejection.
    exited.catch(() => {});
    const [line] = await Promise.race([once(lines, 'line'), exited]);
    const url = listeningUrl(line);
    return { child, url, firstLine: String(line), lines };
  }

  async httpClient(url: string) {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client({ name: 'servers-test', version: '0.0.0' });
    this.defer(() => client.close());
    await client.connect(transport);
    return { client, transport };
  }
}

function listeningUrl(line: unknown): string {
  const parsed: unknown = JSON.parse(String(line));
  if (
    typeof parsed === 'object' &&
    parsed !== null &&
    'listening' in parsed &&
    typeof parsed.listening === 'string'
  ) {
    return parsed.listening;
  }
  throw new Error(`unexpected first line: ${String(line)}`);
}

/** SIGTERM, then wait for the exit event; resolves with the exit code (null if killed by a signal). */
export async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = await exited;
  return typeof code === 'number' ? code : null;
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The text of a tool result's first content block. */
export function textOf(result: object): string {
  const content: unknown[] = 'content' in result && Array.isArray(result.content) ? result.content : [];
  const first = content[0];
  if (typeof first === 'object' && first !== null && 'text' in first && typeof first.text === 'string') {
    return first.text;
  }
  throw new Error(`result has no text content: ${JSON.stringify(result)}`);
}
