import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { PendingInput, Question } from '../api/types.ts';
import { ErrorNote } from '../ErrorNote.tsx';
import { answerApproval, answerQuestion } from './answers.ts';
import { QuestionForm } from './QuestionForm.tsx';

/**
 * What the job's calls wait for a person on: tools' questions and approvals, each answered once.
 * `readOnly` (an operator key, which the API lets read but not answer): shown without the forms.
 */
export function PendingInputs({
  jobId,
  team,
  inputs,
  readOnly,
}: {
  jobId: string;
  team: string;
  inputs: PendingInput[];
  readOnly: boolean;
}) {
  return (
    <section className="pending" data-testid="pending-inputs">
      <h2>{readOnly ? `Waiting for team ${team}` : 'Waiting for you'}</h2>
      {readOnly && <p className="muted">Only the team's own key answers or approves.</p>}
      {inputs.map((input) => (
        <PendingInputCard
          key={`${input.kind}:${input.toolCallId}`}
          jobId={jobId}
          input={input}
          readOnly={readOnly}
        />
      ))}
    </section>
  );
}

function PendingInputCard({
  jobId,
  input,
  readOnly,
}: {
  jobId: string;
  input: PendingInput;
  readOnly: boolean;
}) {
  const client = useQueryClient();
  const send = useMutation({
    mutationFn: (answer: () => Promise<unknown>) => answer(),
    onSuccess: () => client.invalidateQueries({ queryKey: ['job', jobId] }),
  });
  return (
    <article
      className="input-card"
      data-testid="pending-input"
      data-kind={input.kind}
      data-call-id={input.toolCallId}
    >
      <header>
        <strong>{input.kind === 'approval' ? 'Approve this call?' : 'The tool asks'}</strong>{' '}
        <code>
          {input.server}__{input.tool}
        </code>{' '}
        <span className="muted">until {new Date(input.expiresAt).toLocaleString()}</span>
      </header>
      {input.kind === 'approval' ? (
        <>
          <pre>{JSON.stringify(input.arguments, null, 2)}</pre>
          <p className="muted">
            digest <code>{input.digest}</code>
          </p>
          {!readOnly && (
            <div className="actions">
              <button
                type="button"
                data-testid="approve"
                disabled={send.isPending}
                onClick={() => send.mutate(() => answerApproval(jobId, input, 'approve'))}
              >
                Approve
              </button>
              <button
                type="button"
                data-testid="deny"
                disabled={send.isPending}
                onClick={() => send.mutate(() => answerApproval(jobId, input, 'deny'))}
              >
                Deny
              </button>
            </div>
          )}
        </>
      ) : readOnly ? (
        <p>{(input.question as unknown as Question | undefined)?.message}</p>
      ) : (
        input.question && (
          <QuestionForm
            question={input.question as unknown as Question}
            disabled={send.isPending}
            onAnswer={(action, content) =>
              send.mutate(() => answerQuestion(jobId, input.toolCallId, action, content))
            }
          />
        )
      )}
      {send.error && <ErrorNote error={send.error} />}
    </article>
  );
}
