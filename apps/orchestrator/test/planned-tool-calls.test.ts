import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { plannedToolCalls } from '../src/agent/graph/planned-tool-calls.ts';

const turn = (...calls: Array<{ id?: string; name: string; text: string }>) =>
  new AIMessage({
    content: '',
    tool_calls: calls.map(({ id, name, text }) => ({ type: 'tool_call', id, name, args: { text } })),
  });
const answer = (id: string) => new ToolMessage({ tool_call_id: id, content: 'ok' });

/** Issue 8 item 7: every call of a job gets its own id, derived from the conversation alone. */
describe('planned tool calls', () => {
  it('gives calls that reuse a model id distinct, position-derived ids and keeps the model id', () => {
    const messages = [
      new HumanMessage('go'),
      turn(
        { id: 'same', name: 'notes__add_note', text: 'a' },
        { id: 'same', name: 'notes__add_note', text: 'b' },
      ),
      answer('same'),
      answer('same'),
      turn({ id: 'same', name: 'notes__add_note', text: 'c' }, { name: 'search__search', text: 'd' }),
    ];
    expect(plannedToolCalls(messages)).toEqual([
      { id: 'same#3', modelId: 'same', name: 'notes__add_note', args: { text: 'c' }, position: 2 },
      { id: 'call-4', modelId: 'call-4', name: 'search__search', args: { text: 'd' }, position: 3 },
    ]);
    expect(
      plannedToolCalls(messages.slice(0, 2)).map((call) => [call.id, call.modelId, call.position]),
    ).toEqual([
      ['same', 'same', 0],
      ['same#2', 'same', 1],
    ]);
  });

  it('never lets a derived id collide with an id the model chose', () => {
    const planned = plannedToolCalls([
      turn(
        { id: 'x#2', name: 't__a', text: '1' },
        { id: 'x', name: 't__a', text: '2' },
        { id: 'x', name: 't__a', text: '3' },
      ),
    ]);
    const ids = planned.map((call) => call.id);
    expect(new Set(ids).size).toBe(3);
    expect(ids.slice(0, 2)).toEqual(['x#2', 'x']);
  });

  it('is the same for the same conversation (a resumed run maps calls to the same ids)', () => {
    const build = () => [turn({ id: 'k', name: 't__a', text: '1' }, { id: 'k', name: 't__a', text: '2' })];
    expect(plannedToolCalls(build())).toEqual(plannedToolCalls(build()));
  });
});
