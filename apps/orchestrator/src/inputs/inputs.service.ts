import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  UnprocessableEntityException,
} from '@nestjs/common';
import { ArgumentValidator, type Question, withRequestedDefaults } from '@switchyard/contracts';
import type { Team } from '../auth/teams.service.ts';
import { AgentRunQueue } from '../jobs/agent-run-queue.ts';
import {
  type AnswerResult,
  type ApprovalRequest,
  type InputRecord,
  InputStore,
} from '../jobs/input-store.ts';
import { JobEvents } from '../jobs/job-events.ts';
import { type JobResponse, JobsService } from '../jobs/jobs.service.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';
import type { ApprovalDecisionBody, InputAnswer } from './input-requests.ts';

/**
 * A person's answers and approval decisions (docs/semantics.md §14–15): recorded once, with who and
 * when; the last one a parked run waited for wakes it, on whichever replica takes it.
 */
@Injectable()
export class InputsService {
  private readonly validator = new ArgumentValidator();

  constructor(
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(JobsService) private readonly jobs: JobsService,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(AgentRunQueue) private readonly runs: AgentRunQueue,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async answer(team: Team, jobId: string, body: InputAnswer, decidedBy: string): Promise<JobResponse> {
    await this.jobs.owned(team, jobId);
    const result = await this.inputs.answer(
      { jobId, toolCallId: body.toolCallId, kind: 'question' },
      { action: body.action, ...(body.content ? { content: body.content } : {}) },
      decidedBy,
      (record) => this.checkAnswer(record.request as Question, body),
    );
    return this.settled(team, jobId, body.toolCallId, 'question', result);
  }

  async decide(
    team: Team,
    jobId: string,
    callId: string,
    body: ApprovalDecisionBody,
    decidedBy: string,
  ): Promise<JobResponse> {
    await this.jobs.owned(team, jobId);
    const result = await this.inputs.answer(
      { jobId, toolCallId: callId, kind: 'approval' },
      { decision: body.decision, digest: body.digest, ...(body.reason ? { reason: body.reason } : {}) },
      decidedBy,
      (record) => {
        const expected = (record.request as ApprovalRequest).digest;
        // The decision must be about exactly these arguments; a decision about others is refused.
        if (body.digest !== expected) {
          throw new UnprocessableEntityException(
            `digest: ${body.digest} is not the digest of call ${callId}'s arguments (${expected}); the arguments changed or the digest is wrong`,
          );
        }
      },
    );
    return this.settled(team, jobId, callId, 'approval', result);
  }

  private async settled(
    team: Team,
    jobId: string,
    callId: string,
    kind: InputRecord['kind'],
    result: AnswerResult,
  ): Promise<JobResponse> {
    const what = kind === 'approval' ? 'approval request' : 'question';
    if (!result.ok) {
      if (result.reason === 'not_found') {
        throw new ConflictException(`call ${callId} of job ${jobId} has no pending ${what}`);
      }
      if (result.reason === 'expired') {
        throw new ConflictException(
          `the ${what} of call ${callId} expired at ${result.record?.expiresAt.toISOString()}`,
        );
      }
      throw new ConflictException(`the ${what} of call ${callId} was already ${result.record?.state}`);
    }
    const answer = result.record.answer as Record<string, unknown>;
    await this.events.publish(jobId, 'input.answered', {
      kind,
      toolCallId: callId,
      ...('decision' in answer ? { decision: answer.decision } : { action: answer.action }),
      decidedBy: result.record.decidedBy,
    });
    this.log.info(
      {
        job_id: jobId,
        tool_call_id: callId,
        kind,
        decided_by: result.record.decidedBy,
        resume: result.resume,
      },
      'person answered',
    );
    if (result.resume) await this.runs.wake(jobId);
    return this.jobs.get({ kind: 'team', team }, jobId);
  }

  /** A form answer must match the requested schema; declining or cancelling carries no content. */
  private checkAnswer(question: Question, body: InputAnswer): void {
    if (body.action !== 'accept') {
      if (body.content !== undefined)
        throw new BadRequestException(`content: only an accepted answer has content`);
      return;
    }
    if (question.mode === 'url') {
      if (body.content !== undefined)
        throw new BadRequestException('content: a URL question takes no content');
      return;
    }
    // The worker fills in the requested schema's defaults for fields the answer leaves out (SEP-1034),
    // so a required field with a default may be left out here too.
    const content = withRequestedDefaults(question.requestedSchema, body.content ?? {});
    const check = this.validator.check(question.requestedSchema ?? { type: 'object' }, content);
    if (!check.ok) {
      throw new BadRequestException(
        `the answer does not match the requested schema: ${check.errors.map((error) => error.replace(/^arguments/, 'content')).join('; ')}`,
      );
    }
  }
}
