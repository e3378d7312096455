import { Body, Controller, HttpCode, Inject, Param, Post, UseGuards } from '@nestjs/common';
import { CurrentTeam } from '../auth/api-key.guard.ts';
import { AnswerKeyGuard, ApproverKeyGuard, CurrentKeyLabel } from '../auth/approver.guard.ts';
import type { Team } from '../auth/teams.service.ts';
import { ZodValidationPipe } from '../http/zod-validation.pipe.ts';
import { JobIdSchema } from '../jobs/job-request.ts';
import {
  type ApprovalDecisionBody,
  ApprovalDecisionSchema,
  CallIdSchema,
  type InputAnswer,
  InputAnswerSchema,
} from './input-requests.ts';
import { InputsService } from './inputs.service.ts';

/** A person answers what a job's calls wait for (docs/semantics.md §14–15). */
@Controller('v1/jobs')
export class InputsController {
  constructor(@Inject(InputsService) private readonly inputs: InputsService) {}

  @Post(':id/input')
  @HttpCode(200)
  @UseGuards(AnswerKeyGuard)
  async answer(
    @CurrentTeam() team: Team,
    @CurrentKeyLabel() key: string,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
    @Body(new ZodValidationPipe(InputAnswerSchema, 'answer', { body: true })) body: InputAnswer,
  ) {
    return this.inputs.answer(team, id, body, key);
  }

  @Post(':id/approvals/:callId')
  @HttpCode(200)
  @UseGuards(ApproverKeyGuard)
  async decide(
    @CurrentTeam() team: Team,
    @CurrentKeyLabel() key: string,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
    @Param('callId', new ZodValidationPipe(CallIdSchema, 'call id')) callId: string,
    @Body(new ZodValidationPipe(ApprovalDecisionSchema, 'approval decision', { body: true }))
    body: ApprovalDecisionBody,
  ) {
    return this.inputs.decide(team, id, callId, body, key);
  }
}
