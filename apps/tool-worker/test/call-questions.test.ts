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

  // SEP-1034, as the official conformance scenario asks it: a field of each primitive kind with a default.
  const withDefaults: ElicitRequest['params'] = {
    mode: 'form',
    message: 'Who are you?',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive'], default: 'active' },
        verified: { type: 'boolean', default: true },
      },
    },
  };
  const allDefaults = { name: 'John Doe', age: 30, score: 95.5, status: 'active', verified: true };

  it("fills in the requested schema's defaults for the fields an accepted answer leaves out", async () => {
    const questions = new CallQuestions({ action: 'accept', content: { name: 'Ada', verified: false } });
    expect(await questions.handler(withDefaults)).toEqual({
      action: 'accept',
      content: { ...allDefaults, name: 'Ada', verified: false },
    });
    // An empty acceptance is all defaults; a decline stays without content.
    expect(await new CallQuestions({ action: 'accept' }).handler(withDefaults)).toEqual({
      action: 'accept',
      content: allDefaults,
    });
    expect(await new CallQuestions({ action: 'decline' }).handler(withDefaults)).toEqual({
      action: 'decline',
    });
  });

  it('with answerWithDefaults, answers a question whose every field has a default at once, and only such a one', async () => {
    const questions = new CallQuestions(undefined, { answerWithDefaults: true });
    expect(await questions.handler(withDefaults)).toEqual({ action: 'accept', content: allDefaults });
    expect(questions.unanswered).toBeUndefined();
    // A field without a default needs a person: parked as before.
    expect(await questions.handler(form)).toEqual({ action: 'cancel' });
    expect(questions.unanswered?.message).toBe('Confirm?');
    // Off (the default), even an all-defaults form waits for a person.
    const off = new CallQuestions(undefined);
    expect(await off.handler(withDefaults)).toEqual({ action: 'cancel' });
    expect(off.unanswered?.message).toBe('Who are you?');
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
