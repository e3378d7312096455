import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';

/** What a call does with a question its server asks while it runs (docs/semantics.md §14). */
export type QuestionHandler = (request: ElicitRequest['params']) => Promise<ElicitResult>;

/** The elicitation capability the worker declares: form and URL questions, both. */
export const ELICITATION_CAPABILITY = { elicitation: { form: {}, url: {} } } as const;

/**
 * Routes a server's question to the call that is running on the session. On 2025-era revisions the
 * server sends `elicitation/create` mid-call; on 2026-07-28 it answers `tools/call` with an
 * `input_required` result, which the v2 client fulfils through this same handler and retries with
 * `inputResponses` (its auto-fulfilment). A 2025 request does not say which call it belongs to, so it
 * goes to the call only when exactly one is in flight — always, for a `concurrency: 1` server; with
 * several in flight, or none, it is answered `cancel` (the server then finishes the call as it sees fit).
 */
export class SessionQuestions {
  private readonly handlers = new Set<QuestionHandler>();

  /** Registers the running call's handler; returns its removal. */
  attach(handler: QuestionHandler | undefined): () => void {
    if (!handler) return () => undefined;
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async ask(request: ElicitRequest): Promise<ElicitResult> {
    const [only, ...others] = [...this.handlers];
    if (!only || others.length > 0) return { action: 'cancel' };
    return only(request.params);
  }
}
