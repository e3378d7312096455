import { readFileSync } from 'node:fs';
import type { JobRequest } from '@switchyard/client';
import { parse as parseYaml } from 'yaml';
import { UsageError } from '../usage-error.ts';
import { jsonObject } from './json-flag.ts';
import { metadataFrom } from './metadata-pairs.ts';

/** What `jobs submit` was given: a job file, or flags that describe a batch or an agent job. */
export interface SubmitFlags {
  tool?: string[];
  args?: string[];
  agent?: boolean;
  input?: string;
  model?: string;
  allow?: string[];
  deny?: string[];
  maxSteps?: number;
  metadata?: string[];
}

/**
 * The job request to submit. The API validates it fully (a 400 names every bad field); this only
 * refuses what cannot be sent at all, naming the flag or file.
 */
export function jobRequestFrom(
  file: string | undefined,
  flags: SubmitFlags,
  stdin: () => string = () => readFileSync(0, 'utf8'),
): JobRequest {
  const usesFlags = Boolean(flags.tool?.length || flags.args?.length || flags.agent || flags.input);
  if (file && usesFlags) throw new UsageError('give a job file or --tool/--agent flags, not both');
  const metadata = metadataFrom(flags.metadata ?? []);
  let request: Record<string, unknown>;
  if (file) request = readJobFile(file, stdin);
  else if (flags.agent || flags.input) request = agentJob(flags);
  else if (flags.tool?.length) request = batchJob(flags.tool, flags.args ?? []);
  else
    throw new UsageError(
      'nothing to submit: give a job file (JSON or YAML, - for stdin), --tool <name> [--args <json>], or --agent --input <text>',
    );
  if (Object.keys(metadata).length > 0)
    request.metadata = { ...(request.metadata as Record<string, string> | undefined), ...metadata };
  return request as JobRequest;
}

function readJobFile(file: string, stdin: () => string): Record<string, unknown> {
  let text: string;
  try {
    text = file === '-' ? stdin() : readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`job file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let parsed: unknown;
  try {
    // YAML is a superset of JSON: one parser reads both.
    parsed = parseYaml(text);
  } catch (error) {
    throw new UsageError(`job file ${file}: not JSON or YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError(`job file ${file}: must hold one job (an object with "kind": "batch" or "agent")`);
  return parsed as Record<string, unknown>;
}

function batchJob(tools: string[], args: string[]): Record<string, unknown> {
  if (args.length > tools.length)
    throw new UsageError(
      `--args given ${args.length} times for ${tools.length} --tool: each --args follows its --tool`,
    );
  return {
    kind: 'batch',
    calls: tools.map((tool, index) => ({
      tool,
      arguments: jsonObject(`--args #${index + 1}`, args[index] ?? '{}'),
    })),
  };
}

function agentJob(flags: SubmitFlags): Record<string, unknown> {
  if (flags.tool?.length)
    throw new UsageError('--tool makes a batch; an agent job picks its tools (--allow, --deny)');
  if (!flags.input) throw new UsageError('--agent needs --input <text>: what the agent is asked');
  return {
    kind: 'agent',
    input: flags.input,
    ...(flags.model ? { model: modelFrom(flags.model) } : {}),
    ...(flags.allow?.length || flags.deny?.length
      ? {
          tools: {
            ...(flags.allow?.length ? { allow: flags.allow } : {}),
            ...(flags.deny?.length ? { deny: flags.deny } : {}),
          },
        }
      : {}),
    ...(flags.maxSteps ? { limits: { maxSteps: flags.maxSteps } } : {}),
  };
}

/** `--model openai:gpt-4.1-mini` → { provider: 'openai', name: 'gpt-4.1-mini' }. */
function modelFrom(text: string): { provider: string; name: string } {
  const separator = text.indexOf(':');
  if (separator <= 0 || separator === text.length - 1)
    throw new UsageError(`--model "${text}": write <provider>:<name>, e.g. openai:gpt-4.1-mini`);
  return { provider: text.slice(0, separator), name: text.slice(separator + 1) };
}
