import { describe, expect, it } from 'vitest';
import type { ModelChoices } from '../console/src/api/types.ts';
import { type AgentDraft, agentRequest, EMPTY_AGENT_DRAFT } from '../console/src/submit/agent-request.ts';

const CHOICES: ModelChoices = {
  team: 'alpha',
  default: { provider: 'openai', name: 'gpt-4o-mini' },
  providers: [
    { provider: 'openai', keys: 'team' },
    { provider: 'scripted', keys: 'none' },
  ],
};
const draft = (patch: Partial<AgentDraft>): AgentDraft => ({ ...EMPTY_AGENT_DRAFT, ...patch });
const errorOf = (built: ReturnType<typeof agentRequest>) => ('error' in built ? built.error : undefined);

describe("the console's agent form", () => {
  it('builds an agent request: prompt, model, tools allow-list, step limit and metadata', () => {
    const built = agentRequest(
      draft({
        prompt: ' Find the docs ',
        provider: 'scripted',
        script: '[{"final": "done"}]',
        tools: ['search__search'],
        maxSteps: '4',
      }),
      'ticket=OPS-1',
      CHOICES,
    );
    expect(built).toEqual({
      request: {
        kind: 'agent',
        input: 'Find the docs',
        model: { provider: 'scripted', script: [{ final: 'done' }] },
        tools: { allow: ['search__search'] },
        limits: { maxSteps: 4 },
        metadata: { ticket: 'OPS-1' },
      },
    });
  });

  it("leaves the model out for the team's default, and sends messages instead of a prompt", () => {
    const built = agentRequest(
      draft({
        conversation: 'messages',
        messages: [
          { key: 1, role: 'system', content: 'Be brief.' },
          { key: 2, role: 'user', content: 'Hi' },
        ],
      }),
      '',
      CHOICES,
    );
    expect(built).toEqual({
      request: {
        kind: 'agent',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      },
    });
    expect(
      agentRequest(draft({ prompt: 'x', provider: 'openai', name: 'gpt-x' }), '', CHOICES),
    ).toMatchObject({
      request: { model: { provider: 'openai', name: 'gpt-x' } },
    });
  });

  it('says what keeps the form from being a request, before anything is sent', () => {
    expect(errorOf(agentRequest(draft({}), '', CHOICES))).toBe('prompt: write what the agent should do');
    expect(
      errorOf(
        agentRequest(
          draft({ conversation: 'messages', messages: [{ key: 1, role: 'user', content: ' ' }] }),
          '',
          CHOICES,
        ),
      ),
    ).toBe('messages: message 1 is empty');
    expect(errorOf(agentRequest(draft({ prompt: 'x' }), '', { ...CHOICES, default: null }))).toBe(
      'model: this team has no default model; pick one',
    );
    expect(errorOf(agentRequest(draft({ prompt: 'x', provider: 'anthropic', name: 'c' }), '', CHOICES))).toBe(
      'model: this team may not use provider "anthropic"',
    );
    expect(errorOf(agentRequest(draft({ prompt: 'x', provider: 'openai' }), '', CHOICES))).toMatch(
      /^model: name the openai model/,
    );
    expect(
      errorOf(agentRequest(draft({ prompt: 'x', provider: 'scripted', script: '[' }), '', CHOICES)),
    ).toMatch(/^script: not JSON/);
    expect(
      errorOf(agentRequest(draft({ prompt: 'x', provider: 'scripted', script: '{}' }), '', CHOICES)),
    ).toMatch(/^script: a list of turns/);
    expect(errorOf(agentRequest(draft({ prompt: 'x', maxSteps: '0' }), '', CHOICES))).toMatch(/^max steps: /);
    expect(errorOf(agentRequest(draft({ prompt: 'x' }), 'nope', CHOICES))).toBe(
      'metadata: "nope" is not key=value',
    );
  });
});
