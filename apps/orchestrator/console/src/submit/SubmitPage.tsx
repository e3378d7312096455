import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { switchyard } from '../api/switchyard.ts';
import type { JobRequest, JsonSchemaObject, Tool } from '../api/types.ts';
import { useIsOperator } from '../auth/viewer-context.ts';
import { ErrorNote } from '../ErrorNote.tsx';
import { SchemaFields, schemaDefaults } from '../inputs/SchemaFields.tsx';
import { AgentForm } from './AgentForm.tsx';
import { type AgentDraft, agentRequest, EMPTY_AGENT_DRAFT } from './agent-request.ts';
import { batchRequest, type DraftCall, parseRequestJson } from './batch-request.ts';

type Mode = 'form' | 'agent' | 'json';

/**
 * Submit a job: a batch put together from the team's tools (GET /v1/tools), each call's arguments a
 * form built from the tool's input schema; an agent job (AgentForm: a prompt or messages, a model the
 * team may use from GET /v1/models, the tools it may call); or any request typed as JSON. A form is
 * checked before it is sent; the API's refusal (a 4xx naming the problem) is shown as it said it; a
 * submitted job opens at once.
 */
export function SubmitPage() {
  const operator = useIsOperator();
  const navigate = useNavigate();
  const tools = useQuery({ queryKey: ['tools'], queryFn: () => switchyard().listTools() });
  const models = useQuery({
    queryKey: ['models'],
    queryFn: () => switchyard().listModels(),
    enabled: !operator,
  });
  const [mode, setMode] = useState<Mode>('form');
  const [agent, setAgent] = useState<AgentDraft>(EMPTY_AGENT_DRAFT);
  const [calls, setCalls] = useState<DraftCall[]>([]);
  const [picked, setPicked] = useState('');
  const [metadata, setMetadata] = useState('');
  const [json, setJson] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = useMutation({
    mutationFn: (request: JobRequest) => switchyard().submitJob(request),
    onSuccess: (job) => navigate(`/jobs/${job.id}`),
  });

  if (operator)
    return (
      <p className="muted">
        An operator key reads every team's jobs but submits none: sign in with a team's key.
      </p>
    );

  const byName = new Map((tools.data?.tools ?? []).map((tool) => [tool.name, tool]));
  const addCall = () => {
    const tool = byName.get(picked);
    if (!tool) return;
    setCalls([...calls, { key: Date.now(), tool: tool.name, arguments: schemaDefaults(schemaOf(tool)) }]);
  };
  const build = (from: Mode) =>
    from === 'json'
      ? parseRequestJson(json)
      : from === 'agent'
        ? agentRequest(agent, metadata, models.data)
        : batchRequest(calls, metadata);
  const showJson = () => {
    const built = build(mode);
    const fallback = mode === 'agent' ? { kind: 'agent', input: '' } : { kind: 'batch', calls: [] };
    setJson(JSON.stringify('request' in built ? built.request : fallback, null, 2));
    setProblem(null);
    setMode('json');
  };
  const switchTo = (next: Mode) => {
    setProblem(null);
    setMode(next);
  };
  const send = (event: FormEvent) => {
    event.preventDefault();
    const built = build(mode);
    if ('error' in built) {
      setProblem(built.error);
      return;
    }
    setProblem(null);
    submit.mutate(built.request);
  };

  return (
    <section>
      <h1>Submit a job</h1>
      <p className="tabs">
        <button
          type="button"
          data-testid="mode-form"
          disabled={mode === 'form'}
          onClick={() => switchTo('form')}
        >
          Batch from tools
        </button>
        <button
          type="button"
          data-testid="mode-agent"
          disabled={mode === 'agent'}
          onClick={() => switchTo('agent')}
        >
          Agent job
        </button>
        <button type="button" data-testid="mode-json" disabled={mode === 'json'} onClick={showJson}>
          Request as JSON
        </button>
      </p>
      {tools.error && <ErrorNote error={tools.error} />}
      {mode === 'agent' && models.error && <ErrorNote error={models.error} />}
      <form className="submit-job" data-testid="submit-form" onSubmit={send}>
        {mode === 'form' && (
          <>
            <p className="add-call">
              <select
                name="tool"
                data-testid="tool-picker"
                value={picked}
                onChange={(event) => setPicked(event.target.value)}
              >
                <option value="">pick a tool…</option>
                {tools.data?.tools.map((tool) => (
                  <option key={tool.name} value={tool.name} disabled={!tool.available}>
                    {tool.name}
                    {tool.available ? '' : ` (${tool.availability})`}
                  </option>
                ))}
              </select>{' '}
              <button type="button" data-testid="add-call" disabled={!byName.has(picked)} onClick={addCall}>
                Add call
              </button>
            </p>
            {calls.length === 0 && (
              <p className="muted">A batch runs each call once, in parallel. Add a call.</p>
            )}
            {calls.map((call) => {
              const tool = byName.get(call.tool);
              return (
                <fieldset
                  key={call.key}
                  className="draft-call"
                  data-testid="draft-call"
                  data-tool={call.tool}
                >
                  <legend>
                    <code>{call.tool}</code>{' '}
                    <button type="button" onClick={() => setCalls(calls.filter((other) => other !== call))}>
                      Remove
                    </button>
                  </legend>
                  {tool?.description && <p className="muted">{tool.description}</p>}
                  <SchemaFields
                    schema={tool ? schemaOf(tool) : {}}
                    values={call.arguments}
                    onChange={(values) =>
                      setCalls(
                        calls.map((other) => (other === call ? { ...call, arguments: values } : other)),
                      )
                    }
                  />
                </fieldset>
              );
            })}
          </>
        )}
        {mode === 'agent' && (
          <AgentForm
            draft={agent}
            onChange={(next) => {
              // What was refused before the change no longer describes the form.
              setProblem(null);
              submit.reset();
              setAgent(next);
            }}
            tools={tools.data?.tools ?? []}
            choices={models.data}
          />
        )}
        {mode !== 'json' && (
          <label className="field">
            metadata
            <input
              type="text"
              name="metadata"
              placeholder="key=value key=value"
              value={metadata}
              onChange={(event) => setMetadata(event.target.value)}
            />
          </label>
        )}
        {mode === 'json' && (
          <label className="field">
            request (POST /v1/jobs: a batch or an agent job, see /docs)
            <textarea
              name="request"
              data-testid="request-json"
              rows={18}
              value={json}
              onChange={(event) => setJson(event.target.value)}
            />
          </label>
        )}
        <div className="actions">
          <button
            type="submit"
            data-testid="submit-job"
            disabled={submit.isPending || (mode === 'form' && calls.length === 0)}
          >
            Submit
          </button>
        </div>
        {problem && (
          <p className="error" role="alert" data-testid="error">
            {problem}
          </p>
        )}
        {submit.error && <ErrorNote error={submit.error} />}
      </form>
    </section>
  );
}

/** A tool's input schema, as the form builder reads it (the document types it as an open object). */
function schemaOf(tool: Tool): JsonSchemaObject {
  return tool.inputSchema as JsonSchemaObject;
}
