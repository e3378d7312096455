import type { ElicitResult } from '@modelcontextprotocol/client';
import {
  type Answer,
  answerFromDefaults,
  boundedQuestion,
  type Question,
  withRequestedDefaults,
} from '@switchyard/contracts';
import type { QuestionHandler } from '../sessions/session-questions.ts';

/**
 * One call's side of a server's questions (docs/semantics.md §14): the first question gets the
 * person's answer the call carries, if any, with the requested schema's defaults filled in for the
 * fields it leaves out (SEP-1034). With `answerWithDefaults`, a form question whose every field has a
 * default is answered with those at once. Any other question is answered `cancel` — a person is not
 * waited for while the call holds the server's slot — and the call then ends `input_required` with that
 * question, whatever the server replied to the cancel.
 */
export class CallQuestions {
  private answer: Answer | undefined;
  /** The question this call could not answer; the orchestrator asks a person and retries the call. */
  unanswered: Question | undefined;

  constructor(
    answer: Answer | undefined,
    private readonly options: { answerWithDefaults?: boolean } = {},
  ) {
    this.answer = answer;
  }

  readonly handler: QuestionHandler = async (params) => {
    const answer = this.answer;
    const requestedSchema =
      params.mode === 'url' ? undefined : (params.requestedSchema as Record<string, unknown>);
    if (answer) {
      // One answer answers one question; a further question is the next round's.
      this.answer = undefined;
      return elicitResult(answer, requestedSchema);
    }
    const defaults = this.options.answerWithDefaults ? answerFromDefaults(requestedSchema) : undefined;
    if (defaults) return { action: 'accept', content: defaults as ElicitResult['content'] };
    if (!this.unanswered) {
      const asked: Question =
        params.mode === 'url'
          ? {
              mode: 'url',
              message: params.message,
              url: params.url,
              elicitationId: params.elicitationId,
            }
          : {
              mode: 'form',
              message: params.message,
              requestedSchema: params.requestedSchema as Record<string, unknown>,
            };
      this.unanswered = boundedQuestion(asked) ?? {
        mode: 'form',
        message: `${asked.message.slice(0, 500)} [the requested schema was too large to keep]`,
      };
    }
    return { action: 'cancel' };
  };
}

function elicitResult(answer: Answer, requestedSchema: Record<string, unknown> | undefined): ElicitResult {
  if (answer.action !== 'accept') return { action: answer.action };
  const content = withRequestedDefaults(requestedSchema, answer.content ?? {});
  return Object.keys(content).length > 0
    ? { action: 'accept', content: content as ElicitResult['content'] }
    : { action: 'accept' };
}
