import type { JobRequest, ModelChoices } from '../api/types.ts';
import { parseMetadataPairs } from '../jobs/metadata-filter.ts';

export type Role = 'system' | 'user' | 'assistant';

/** One message of the conversation being put together. */
export interface DraftMessage {
  key: number;
  role: Role;
  content: string;
}

/** What the agent form holds: the texts as typed, turned into a request by `agentRequest`. */
export interface AgentDraft {
  /** A prompt (the API's `input`) or a conversation (`messages`). */
  conversation: 'prompt' | 'messages';
  prompt: string;
  messages: DraftMessage[];
  /** A provider of GET /v1/models, or '' for the team's default model. */
  provider: string;
  name: string;
  /** The scripted provider's turns, as JSON. */
  script: string;
  /** Tools the run may call; none picked: every tool the team may use. */
  tools: string[];
  maxSteps: string;
}

export const EMPTY_AGENT_DRAFT: AgentDraft = {
  conversation: 'prompt',
  prompt: '',
  messages: [{ key: 0, role: 'user', content: '' }],
  provider: '',
  name: '',
  script: '',
  tools: [],
  maxSteps: '',
};

type Built = { request: JobRequest } | { error: string };

/**
 * The agent job the form describes, or the first thing that keeps it from being one, checked before it
 * is sent (the API checks the rest and its 4xx is shown as it said it): a prompt or messages, a model
 * the team may use (or its default), a script that is JSON, a step limit that is a number, metadata pairs.
 */
export function agentRequest(
  draft: AgentDraft,
  metadataText: string,
  choices: ModelChoices | undefined,
): Built {
  const conversation = conversationOf(draft);
  if ('error' in conversation) return conversation;
  const model = modelOf(draft, choices);
  if ('error' in model) return model;
  const metadata = parseMetadataPairs(metadataText);
  if ('error' in metadata) return { error: `metadata: ${metadata.error}` };
  const maxSteps = draft.maxSteps.trim();
  if (maxSteps !== '' && !/^[1-9]\d*$/.test(maxSteps))
    return { error: `max steps: "${maxSteps}" is not a whole number of at least 1` };
  return {
    request: {
      kind: 'agent',
      ...conversation.value,
      ...(model.value ? { model: model.value } : {}),
      ...(draft.tools.length > 0 ? { tools: { allow: draft.tools } } : {}),
      ...(maxSteps !== '' ? { limits: { maxSteps: Number(maxSteps) } } : {}),
      ...(Object.keys(metadata.pairs).length > 0 ? { metadata: metadata.pairs } : {}),
    } as JobRequest,
  };
}

function conversationOf(
  draft: AgentDraft,
): { value: { input: string } | { messages: { role: Role; content: string }[] } } | { error: string } {
  if (draft.conversation === 'prompt') {
    const input = draft.prompt.trim();
    return input === '' ? { error: 'prompt: write what the agent should do' } : { value: { input } };
  }
  if (draft.messages.length === 0) return { error: 'messages: add at least one message' };
  const empty = draft.messages.findIndex((message) => message.content.trim() === '');
  if (empty >= 0) return { error: `messages: message ${empty + 1} is empty` };
  return { value: { messages: draft.messages.map(({ role, content }) => ({ role, content })) } };
}

type Model = Extract<JobRequest, { kind: 'agent' }>['model'];

function modelOf(draft: AgentDraft, choices: ModelChoices | undefined): { value: Model } | { error: string } {
  if (draft.provider === '') {
    // No model in the request: the API fills in the team's default, so one must exist.
    if (choices && !choices.default) return { error: 'model: this team has no default model; pick one' };
    return { value: undefined };
  }
  if (choices && !choices.providers.some((entry) => entry.provider === draft.provider))
    return { error: `model: this team may not use provider "${draft.provider}"` };
  if (draft.provider === 'scripted') {
    let script: unknown;
    try {
      script = JSON.parse(draft.script);
    } catch (error) {
      return { error: `script: not JSON: ${(error as Error).message}` };
    }
    if (!Array.isArray(script) || script.length === 0)
      return { error: 'script: a list of turns, e.g. [{"final": "done"}]' };
    return { value: { provider: 'scripted', script } as Model };
  }
  const name = draft.name.trim();
  if (name === '') return { error: `model: name the ${draft.provider} model (e.g. gpt-4o-mini)` };
  return { value: { provider: draft.provider, name } as Model };
}
