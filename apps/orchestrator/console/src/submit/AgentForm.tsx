import type { ModelChoices, Tool } from '../api/types.ts';
import type { AgentDraft, DraftMessage, Role } from './agent-request.ts';

const ROLES: Role[] = ['system', 'user', 'assistant'];
const CONVERSATIONS: AgentDraft['conversation'][] = ['prompt', 'messages'];
const SCRIPT_EXAMPLE = '[{"final": "done"}]';

/**
 * The fields of an agent job: a prompt or a conversation, a model among those the team may use
 * (GET /v1/models; none picked: the team's default), the tools it may call (picked from the team's
 * catalog; none picked: all of them), a step limit and metadata. The page turns the draft into a request.
 */
export function AgentForm({
  draft,
  onChange,
  tools,
  choices,
}: {
  draft: AgentDraft;
  onChange: (draft: AgentDraft) => void;
  tools: Tool[];
  choices: ModelChoices | undefined;
}) {
  const set = (patch: Partial<AgentDraft>) => onChange({ ...draft, ...patch });
  const setMessage = (message: DraftMessage, patch: Partial<DraftMessage>) =>
    set({ messages: draft.messages.map((other) => (other === message ? { ...message, ...patch } : other)) });
  const toggleTool = (name: string, on: boolean) =>
    set({ tools: on ? [...draft.tools, name] : draft.tools.filter((tool) => tool !== name) });
  const preset = choices?.default;

  return (
    <div className="agent-form" data-testid="agent-form">
      <p className="tabs">
        {CONVERSATIONS.map((conversation) => (
          <label key={conversation}>
            <input
              type="radio"
              name="conversation"
              value={conversation}
              checked={draft.conversation === conversation}
              onChange={() => set({ conversation })}
            />{' '}
            {conversation}{' '}
          </label>
        ))}
      </p>
      {draft.conversation === 'prompt' ? (
        <label className="field">
          prompt
          <textarea
            name="prompt"
            rows={4}
            value={draft.prompt}
            onChange={(event) => set({ prompt: event.target.value })}
          />
        </label>
      ) : (
        <fieldset className="draft-call" data-testid="agent-messages">
          <legend>messages</legend>
          {draft.messages.map((message, index) => (
            <p key={message.key} className="agent-message">
              <select
                name={`role-${index}`}
                value={message.role}
                onChange={(event) => setMessage(message, { role: event.target.value as Role })}
              >
                {ROLES.map((role) => (
                  <option key={role} value={role}>
                    {role}
                  </option>
                ))}
              </select>{' '}
              <textarea
                name={`content-${index}`}
                rows={2}
                value={message.content}
                onChange={(event) => setMessage(message, { content: event.target.value })}
              />{' '}
              <button
                type="button"
                onClick={() => set({ messages: draft.messages.filter((other) => other !== message) })}
              >
                Remove
              </button>
            </p>
          ))}
          <button
            type="button"
            onClick={() =>
              set({ messages: [...draft.messages, { key: Date.now(), role: 'user', content: '' }] })
            }
          >
            Add message
          </button>
        </fieldset>
      )}
      <p className="model-choice">
        <label className="field">
          model provider
          <select
            name="provider"
            data-testid="model-provider"
            value={draft.provider}
            onChange={(event) => set({ provider: event.target.value })}
          >
            <option value="">
              {preset ? `team default (${preset.provider}: ${preset.name})` : 'team default (none set)'}
            </option>
            {choices?.providers.map((entry) => (
              <option key={entry.provider} value={entry.provider}>
                {entry.provider}
                {entry.keys === 'none' ? '' : ` (${entry.keys} key)`}
              </option>
            ))}
          </select>
        </label>
        {draft.provider !== '' && draft.provider !== 'scripted' && (
          <label className="field">
            model name
            <input
              type="text"
              name="model-name"
              placeholder={preset?.provider === draft.provider ? preset.name : 'e.g. gpt-4o-mini'}
              value={draft.name}
              onChange={(event) => set({ name: event.target.value })}
            />
          </label>
        )}
      </p>
      {draft.provider === 'scripted' && (
        <label className="field">
          script (the turns the scripted model replays, JSON)
          <textarea
            name="script"
            rows={5}
            placeholder={SCRIPT_EXAMPLE}
            value={draft.script}
            onChange={(event) => set({ script: event.target.value })}
          />
        </label>
      )}
      <fieldset className="draft-call" data-testid="agent-tools">
        <legend>tools the agent may call (none picked: every tool of the team)</legend>
        {tools.length === 0 && <p className="muted">This team has no tools.</p>}
        {tools.map((tool) => (
          <label key={tool.name} className="tool-choice">
            <input
              type="checkbox"
              name="tool"
              value={tool.name}
              checked={draft.tools.includes(tool.name)}
              onChange={(event) => toggleTool(tool.name, event.target.checked)}
            />{' '}
            <code>{tool.name}</code>
            {tool.available ? '' : ` (${tool.availability})`}
          </label>
        ))}
      </fieldset>
      <label className="field">
        max steps (empty: the deployment's default)
        <input
          type="text"
          inputMode="numeric"
          name="max-steps"
          value={draft.maxSteps}
          onChange={(event) => set({ maxSteps: event.target.value })}
        />
      </label>
    </div>
  );
}
