import { useId, useState } from 'react';
import type { JsonSchemaObject, JsonSchemaProperty } from '../api/types.ts';

/** The values a schema's form starts with: each property's default, where it has one. */
export function schemaDefaults(schema: JsonSchemaObject): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.properties ?? {}).flatMap(([name, p]) =>
      p.default !== undefined ? [[name, p.default]] : [],
    ),
  );
}

/**
 * One labelled field per property of a JSON schema object: a tool's question (its requested schema,
 * which MCP keeps flat: strings, numbers, booleans, enums) and a batch call's arguments on the submit
 * page (a tool's input schema), where a nested object or array property is a JSON text box.
 */
export function SchemaFields({
  schema,
  values,
  onChange,
}: {
  schema: JsonSchemaObject;
  values: Record<string, unknown>;
  onChange: (values: Record<string, unknown>) => void;
}) {
  const formId = useId();
  const required = new Set(schema.required ?? []);
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([name, property]) => (
        <label key={name} className="field" htmlFor={`${formId}-${name}`}>
          {property.title ?? name}
          {required.has(name) && ' *'}
          <Field
            id={`${formId}-${name}`}
            name={name}
            property={property}
            required={required.has(name)}
            value={values[name]}
            onChange={(value) => {
              const next = { ...values };
              if (value === undefined) delete next[name];
              else next[name] = value;
              onChange(next);
            }}
          />
          {property.description && <small className="muted">{property.description}</small>}
        </label>
      ))}
    </>
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
  if (property.type === 'object' || property.type === 'array')
    return <JsonField id={id} name={name} required={required} value={value} onChange={onChange} />;
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

/** A nested value as JSON; text that does not parse yet is kept as typed, and sent as no value. */
function JsonField({
  id,
  name,
  required,
  value,
  onChange,
}: {
  id: string;
  name: string;
  required: boolean;
  value: unknown;
  onChange: (value: unknown) => void;
}) {
  const [text, setText] = useState(() => (value === undefined ? '' : JSON.stringify(value)));
  return (
    <textarea
      id={id}
      name={name}
      required={required}
      rows={2}
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        try {
          onChange(e.target.value.trim() ? JSON.parse(e.target.value) : undefined);
        } catch {
          onChange(undefined);
        }
      }}
    />
  );
}
