import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { entryPoint, REPO_ROOT, tsxArgs } from '../support/paths.ts';

const CLI = entryPoint('apps/cli', 'main');
const EXIT = { ok: 0, usage: 2, inputRequired: 5 };

/**
 * People in the loop from the command line, against the teller example server: `jobs watch` stops with
 * exit 5 when a call waits for a person, `jobs answer` / `jobs approve` give the answer or the decision
 * (bound to the digest of the arguments it prints), and watching again follows the job to its end.
 */
describe('the switchyard CLI answers questions and approvals', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const run = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((done) => {
      execFile(
        process.execPath,
        tsxArgs(CLI, ...args),
        {
          cwd: REPO_ROOT,
          timeout: 90_000,
          env: { ...process.env, SWITCHYARD_URL: orchestrator.url, SWITCHYARD_API_KEY: TEAM_KEYS.alpha },
        },
        (error, stdout, stderr) =>
          done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      );
    });
  const submitAgent = async (toolCalls: unknown[], final: string): Promise<string> => {
    const submitted = await orchestrator.api('alpha').submit({
      kind: 'agent',
      input: 'Do the banking.',
      model: { provider: 'scripted', script: [{ toolCalls }, { final }] },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    return submitted.body.id;
  };

  beforeAll(async () => {
    deployment = new Deployment('cli-inputs', (dir) => ({
      teller: exampleServer('teller', {
        env: { TELLER_LEDGER: `${dir}/teller.jsonl` },
        trusted: true,
        approval: { default: 'never', tools: { close_account: 'auto' } },
      }),
    }));
    await deployment.startWorker({ id: 'w-cli-inputs' });
    orchestrator = await deployment.startOrchestrator('o-cli-inputs');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('watch stops at a question (exit 5); jobs answer resumes the run; watch then ends at succeeded', async () => {
    const id = await submitAgent(
      [{ id: 'pay', tool: 'teller__transfer', arguments: { to: 'ACME', amount: 120 } }],
      'Paid.',
    );
    const waiting = await run(['jobs', 'watch', id]);
    expect(waiting.code, waiting.stdout + waiting.stderr).toBe(EXIT.inputRequired);
    expect(waiting.stdout).toMatch(
      /⏸ teller__transfer \[pay\] awaiting input: Confirm the transfer of 120 to ACME/,
    );
    expect(waiting.stdout.trim().split('\n').at(-1)).toMatch(/job input_required$/);
    expect((await run(['jobs', 'get', id])).stdout).toMatch(/waits for an answer: teller__transfer \[pay\]/);

    const noCall = await run(['jobs', 'answer', id]);
    expect(noCall.code).toBe(EXIT.usage);
    expect(noCall.stderr).toMatch(/required option '--call <toolCallId>' not specified/);
    const answered = await run(['jobs', 'answer', id, '--call', 'pay', '--content', '{"confirm":true}']);
    expect(answered.code, answered.stderr).toBe(EXIT.ok);
    expect(answered.stdout).toMatch(new RegExp(`^answered pay: ${id} agent`));

    const finished = await run(['jobs', 'watch', id]);
    expect(finished.code, finished.stdout + finished.stderr).toBe(EXIT.ok);
    expect(finished.stdout.trim().split('\n').at(-1)).toMatch(/job succeeded$/);
  });

  it('jobs approve decides a pending approval on the digest of the arguments it prints', async () => {
    const id = await submitAgent(
      [{ id: 'close', tool: 'teller__close_account', arguments: { account: 'A-7' } }],
      'Closed.',
    );
    const waiting = await run(['jobs', 'watch', id]);
    expect(waiting.code, waiting.stdout + waiting.stderr).toBe(EXIT.inputRequired);
    // Held for a person, nothing sent: never shown as dispatched to the server.
    expect(waiting.stdout).toMatch(
      /⏸ teller__close_account \[close\] awaiting approval of \{"account":"A-7"\}/,
    );
    expect(waiting.stdout).not.toMatch(/→ teller__close_account \[close\] dispatched/);
    const held = await run(['jobs', 'get', id]);
    expect(held.stdout).toMatch(/close\s+teller__close_account\s+teller\s+awaiting_approval/);
    expect(held.stdout).toMatch(/close waited for approval: asked \S+, pending/);

    const none = await run(['jobs', 'approve', id, 'nope']);
    expect(none.code).toBe(EXIT.usage);
    expect(none.stderr).toMatch(/has no call nope waiting for approval/);

    const approved = await run(['jobs', 'approve', id, 'close', '--reason', 'ticket OPS-7']);
    expect(approved.code, approved.stderr).toBe(EXIT.ok);
    expect(approved.stdout).toMatch(
      /^approved teller__close_account \[close\] sha256:[0-9a-f]{64}\narguments \{"account":"A-7"\}/,
    );

    const finished = await run(['jobs', 'watch', id, '--json']);
    expect(finished.code, finished.stderr).toBe(EXIT.ok);
    const events = finished.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; data: Record<string, unknown> });
    expect(events.at(-1)).toMatchObject({ event: 'status', data: { status: 'succeeded' } });
    expect(events.filter((event) => event.event === 'tool_call.finished').at(-1)).toMatchObject({
      data: { tool: 'teller__close_account', status: 'ok' },
    });
    const shown = await run(['jobs', 'get', id]);
    expect(shown.stdout).toMatch(/close waited for approval: asked \S+, answered \S+/);
    expect(shown.stdout).toMatch(/close attempt 1 on w-cli-inputs: picked up \S+, sent \S+, ended \S+/);
  });
});
