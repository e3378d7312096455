import { JOB_STATUSES, type JobListQuery } from '@switchyard/client';
import { type Command, Option } from 'commander';
import type { Act } from '../action.ts';
import { EXIT } from '../exit-codes.ts';
import { collect, positiveInt, statusList } from '../option-parsers.ts';
import type { Output } from '../output/output.ts';
import { table } from '../output/table.ts';
import { answerQuestion, decideApproval } from './inputs.ts';
import { jobRequestFrom, type SubmitFlags } from './job-request-input.ts';
import { metadataFrom } from './metadata-pairs.ts';
import { jobDetails, jobHeadline } from './show.ts';
import { watchJob } from './watch.ts';

/** `switchyard jobs …`: submit, watch, list, get, cancel, delete, answer, approve. */
export function addJobCommands(program: Command, act: Act, out: Output): void {
  const jobs = program
    .command('jobs')
    .description('submit, watch, list, show, cancel and delete jobs; answer questions and approvals');

  jobs
    .command('submit')
    .description('submit a job from a file (JSON or YAML; - for stdin) or from flags')
    .argument('[file]', 'the job request')
    .option('--tool <name>', 'a batch call to <server>__<tool> (repeat for more calls)', collect)
    .option('--args <json>', 'the arguments of the preceding --tool, a JSON object', collect)
    .option('--agent', 'an agent job (with --input)')
    .option('--input <text>', 'what the agent is asked')
    .option('--model <provider:name>', 'the model of an agent job, e.g. openai:gpt-4.1-mini')
    .option('--allow <pattern>', 'tools the agent may use (repeatable glob)', collect)
    .option('--deny <pattern>', 'tools the agent may not use (repeatable glob)', collect)
    .option('--max-steps <n>', 'model calls the agent may make', positiveInt)
    .option('--metadata <key=value>', 'tag the job (repeatable)', collect)
    .option('--idempotency-key <key>', 'submitting again with this key returns the same job')
    .option('--watch', 'then watch it; exit with the code of how it ended')
    .action(
      act(
        async (
          client,
          file: string | undefined,
          flags: SubmitFlags & { idempotencyKey?: string; watch?: boolean },
        ) => {
          const request = jobRequestFrom(file, flags);
          const job = await client.submitJob(
            request,
            flags.idempotencyKey ? { idempotencyKey: flags.idempotencyKey } : {},
          );
          if (!flags.watch) {
            out.result(job, () => jobHeadline(job));
            return EXIT.ok;
          }
          out.line({ id: null, event: 'submitted', data: job }, () => `submitted ${jobHeadline(job)}`);
          return watchJob(client, job.id, out);
        },
      ),
    );

  jobs
    .command('watch')
    .description("follow a job's events live until it ends; exit with the code of how it ended")
    .argument('<id>', 'the job')
    .option('--after <eventId>', 'start after this event (as a reconnecting client would)')
    .action(
      act((client, id: string, flags: { after?: string }) =>
        watchJob(client, id, out, flags.after ? { lastEventId: flags.after } : {}),
      ),
    );

  jobs
    .command('list')
    .description("the team's jobs, newest first")
    .addOption(
      new Option(
        '--status <status>',
        `only jobs in this status (repeatable): ${JOB_STATUSES.join(', ')}`,
      ).argParser(statusList),
    )
    .addOption(new Option('--kind <kind>', 'only jobs of this kind').choices(['agent', 'batch', 'mcp']))
    .option('--metadata <key=value>', 'only jobs tagged so (repeatable)', collect)
    .option('--created-after <iso>', 'only jobs created after this instant')
    .option('--created-before <iso>', 'only jobs created before this instant')
    .option('--limit <n>', 'jobs per page', positiveInt)
    .option('--cursor <cursor>', 'the page after the one that printed this cursor')
    .action(
      act(
        async (
          client,
          flags: {
            status?: string[];
            kind?: 'agent' | 'batch' | 'mcp';
            metadata?: string[];
            createdAfter?: string;
            createdBefore?: string;
            limit?: number;
            cursor?: string;
          },
        ) => {
          const { metadata, status, ...rest } = flags;
          const query = {
            ...rest,
            ...(status ? { status } : {}),
            ...(metadata ? { metadata: metadataFrom(metadata) } : {}),
          } as JobListQuery;
          const page = await client.listJobs(query);
          out.result(page, () =>
            table(
              page.jobs.map((job) => ({
                id: job.id,
                kind: job.kind,
                status: job.status,
                created: job.createdAt,
                finished: job.finishedAt,
                metadata: Object.entries(job.metadata)
                  .map(([key, value]) => `${key}=${value}`)
                  .join(' '),
              })),
            ),
          );
          if (page.nextCursor && !out.json) out.note(`more: --cursor ${page.nextCursor}`);
          return EXIT.ok;
        },
      ),
    );

  jobs
    .command('get')
    .description(
      'a job: what was submitted, its status, and every tool call (server, worker, outcome, timings)',
    )
    .argument('<id>', 'the job')
    .action(
      act(async (client, id: string) => {
        const job = await client.getJob(id);
        out.result(job, () => jobDetails(job));
        return EXIT.ok;
      }),
    );

  jobs
    .command('cancel')
    .description('cancel a queued or running job')
    .argument('<id>', 'the job')
    .action(
      act(async (client, id: string) => {
        const job = await client.cancelJob(id);
        out.result(job, () => jobHeadline(job));
        return EXIT.ok;
      }),
    );

  jobs
    .command('delete')
    .description('delete an ended job with its calls and events')
    .argument('<id>', 'the job')
    .action(
      act(async (client, id: string) => {
        await client.deleteJob(id);
        out.result({ id, deleted: true }, () => `deleted ${id}`);
        return EXIT.ok;
      }),
    );

  jobs
    .command('answer')
    .description('answer the question a call of the job waits for (see jobs get: pending inputs)')
    .argument('<id>', 'the job')
    .requiredOption('--call <toolCallId>', 'the call that asked')
    .option('--content <json>', 'the answer, a JSON object matching the requested schema')
    .option('--decline', 'decline to answer')
    .option('--cancel', 'cancel the question')
    .action(
      act(
        async (
          client,
          id: string,
          flags: { call: string; content?: string; decline?: boolean; cancel?: boolean },
        ) => {
          const job = await answerQuestion(client, id, flags);
          out.result(job, () => `answered ${flags.call}: ${jobHeadline(job)}`);
          return EXIT.ok;
        },
      ),
    );

  jobs
    .command('approve')
    .description('approve (or --deny) a call that waits for approval, bound to the digest of its arguments')
    .argument('<id>', 'the job')
    .argument('<callId>', 'the call')
    .option('--deny', 'deny it instead')
    .option('--reason <text>', 'why (kept in the audit trail)')
    .option(
      '--digest <sha256:…>',
      'the digest you reviewed (default: the pending call’s, printed with its arguments)',
    )
    .action(
      act(
        async (
          client,
          id: string,
          callId: string,
          flags: { deny?: boolean; reason?: string; digest?: string },
        ) => {
          const { job, approval } = await decideApproval(client, id, callId, flags);
          out.result(job, () =>
            [
              `${flags.deny ? 'denied' : 'approved'} ${approval.server}__${approval.tool} [${callId}] ${approval.digest}`,
              `arguments ${JSON.stringify(approval.arguments ?? {})}`,
              jobHeadline(job),
            ].join('\n'),
          );
          return EXIT.ok;
        },
      ),
    );
}
