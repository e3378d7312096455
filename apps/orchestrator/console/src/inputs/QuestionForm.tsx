import { type FormEvent, useId, useState } from 'react';
import type { JsonSchemaProperty, Question } from '../api/types.ts';
import type { AnswerAction } from './answers.ts';

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
  const properties = Object.entries(question.requestedSchema?.properties ?? {});
  const required = new Set(question.requestedSchema?.required ?? []);
  const formId = useId();
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(
      properties.flatMap(([name, p]) => (p.default !== undefined ? [[name, p.default]] : [])),
    ),
  );
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
      {properties.map(([name, property]) => (
        <label key={name} className="field" htmlFor={`${formId}-${name}`}>
          {property.title ?? name}
          {required.has(name) && ' *'}
          <Field
            id={`${formId}-${name}`}
            name={name}
            property={property}
            required={required.has(name)}
            value={values[name]}
            onChange={(value) => setValues({ ...values, [name]: value })}
          />
          {property.description && <small className="muted">{property.description}</small>}
        </label>
      ))}
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

function Field({
  id,
  name,
  property,
  required,
  value,
  onChange,
}: {
  id: string;
  name: string;
  property: JsonSchemaProperty;
  required: boolean;
  value: unknown;
  onChange: (value: unknown) => void;
}) {
  if (property.enum)
    return (
      <select
        id={id}
        name={name}
        required={required}
        value={String(value ?? '')}
        onChange={(e) => onChange(e.target.value)}
      >
        <option value="" />
        {property.enum.map((option) => (
          <option key={String(option)} value={String(option)}>
            {String(option)}
          </option>
        ))}
      </select>
    );
  if (property.type === 'boolean')
    return (
      <input
        id={id}
        type="checkbox"
        name={name}
        checked={value === true}
        onChange={(e) => onChange(e.target.checked)}
      />
    );
  if (property.type === 'number' || property.type === 'integer')
    return (
      <input
        id={id}
        type="number"
        name={name}
        required={required}
        step={property.type === 'integer' ? 1 : 'any'}
        value={value === undefined ? '' : String(value)}
        onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
      />
    );
  return (
    <input
      id={id}
      type="text"
      name={name}
      required={required}
      value={String(value ?? '')}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}
