import { type FormEvent, useState } from 'react';
import type { Question } from '../api/types.ts';
import type { AnswerAction } from './answers.ts';
import { SchemaFields, schemaDefaults } from './SchemaFields.tsx';

/**
 * A tool's question as a form: one field per property of its requested schema (MCP elicitation keeps
 * it flat: strings, numbers, booleans, enums). A URL question is a link to visit, then accept.
 */
export function QuestionForm({
  question,
  disabled,
  onAnswer,
}: {
  question: Question;
  disabled: boolean;
  onAnswer: (action: AnswerAction, content?: Record<string, unknown>) => void;
}) {
  const schema = question.requestedSchema ?? {};
  const [values, setValues] = useState<Record<string, unknown>>(() => schemaDefaults(schema));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onAnswer('accept', question.mode === 'form' ? values : undefined);
  };
  return (
    <form className="question" data-testid="question-form" onSubmit={submit}>
      <p>{question.message}</p>
      {question.mode === 'url' && question.url && (
        <p>
          <a href={question.url} target="_blank" rel="noreferrer">
            {question.url}
          </a>
        </p>
      )}
      <SchemaFields schema={schema} values={values} onChange={setValues} />
      <div className="actions">
        <button type="submit" data-testid="accept" disabled={disabled}>
          Send
        </button>
        <button type="button" data-testid="decline" disabled={disabled} onClick={() => onAnswer('decline')}>
          Decline
        </button>
      </div>
    </form>
  );
}
