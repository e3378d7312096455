import type { ElicitResult } from '@modelcontextprotocol/client';
import { type Answer, boundedQuestion, type Question } from '@switchyard/contracts';
import type { QuestionHandler } from '../sessions/session-questions.ts';

/**
 * One call's side of a server's questions (docs/semantics.md §14, older MCP revisions): the first
 * question gets the person's answer the call carries, if any; a question with no answer on hand is
 * answered `cancel` — a person is not waited for while the call holds the server's slot — and the
 * call then ends `input_required` with that question, whatever the server replied to the cancel.
 */
export class CallQuestions {
  private answer: Answer | undefined;
  /** The question this call could not answer; the orchestrator asks a person and retries the call. */
  unanswered: Question | undefined;

  constructor(answer: Answer | undefined) {
    this.answer = answer;
  }

  readonly handler: QuestionHandler = async (params) => {
    const answer = this.answer;
    if (answer) {
      // One answer answers one question; a further question is the next round's.
      this.answer = undefined;
      return elicitResult(answer);
    }
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

function elicitResult(answer: Answer): ElicitResult {
  if (answer.action !== 'accept' || !answer.content) return { action: answer.action };
  return { action: 'accept', content: answer.content as ElicitResult['content'] };
}
