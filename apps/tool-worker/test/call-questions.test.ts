import type { ElicitRequest } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { CallQuestions } from '../src/execution/call-questions.ts';
import { SessionQuestions } from '../src/sessions/session-questions.ts';

const form: ElicitRequest['params'] = {
  mode: 'form',
  message: 'Confirm?',
  requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
};
const request = (params: ElicitRequest['params']) =>
  ({ method: 'elicitation/create', params }) as ElicitRequest;

describe("a call's answers to its server's questions", () => {
  it('without an answer on hand: cancels, and keeps the question to ask a person', async () => {
    const questions = new CallQuestions(undefined);
    expect(await questions.handler(form)).toEqual({ action: 'cancel' });
    expect(questions.unanswered).toEqual({
      mode: 'form',
      message: 'Confirm?',
      requestedSchema: form.requestedSchema,
    });
  });

  it('answers the first question with the answer it carries, and only the first', async () => {
    const questions = new CallQuestions({ action: 'accept', content: { confirm: true } });
    expect(await questions.handler(form)).toEqual({ action: 'accept', content: { confirm: true } });
    expect(questions.unanswered).toBeUndefined();
    // A second question is the next round's: cancelled and kept.
    expect(
      await questions.handler({
        mode: 'url',
        message: 'Sign in',
        url: 'https://x.test/',
        elicitationId: 'e1',
      }),
    ).toEqual({
      action: 'cancel',
    });
    expect(questions.unanswered).toEqual({
      mode: 'url',
      message: 'Sign in',
      url: 'https://x.test/',
      elicitationId: 'e1',
    });
  });

  it('a decline carries no content', async () => {
    const questions = new CallQuestions({ action: 'decline', content: { confirm: true } });
    expect(await questions.handler(form)).toEqual({ action: 'decline' });
  });

  it('does not keep a requested schema too large to store', async () => {
    const huge = { type: 'object', properties: { x: { type: 'string', description: 'y'.repeat(10_000) } } };
    const questions = new CallQuestions(undefined);
    await questions.handler({
      mode: 'form',
      message: 'Big form',
      requestedSchema: huge,
    } as ElicitRequest['params']);
    expect(questions.unanswered?.requestedSchema).toBeUndefined();
    expect(questions.unanswered?.message).toContain('too large');
  });
});

describe("a session's routing of questions", () => {
  it('goes to the one call in flight, and is cancelled with none or several', async () => {
    const session = new SessionQuestions();
    expect(await session.ask(request(form))).toEqual({ action: 'cancel' });
    const first = new CallQuestions({ action: 'accept', content: { confirm: true } });
    const detachFirst = session.attach(first.handler);
    expect(await session.ask(request(form))).toEqual({ action: 'accept', content: { confirm: true } });
    const second = new CallQuestions({ action: 'accept', content: { confirm: false } });
    const detachSecond = session.attach(second.handler);
    // Which call asked is unknown with two in flight: neither answer is given away.
    expect(await session.ask(request(form))).toEqual({ action: 'cancel' });
    expect(second.unanswered).toBeUndefined();
    detachFirst();
    detachSecond();
    expect(await session.ask(request(form))).toEqual({ action: 'cancel' });
  });
});
