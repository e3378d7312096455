import type { LoggingMessageNotificationParams } from '@modelcontextprotocol/client';

/** What a call does with a log message its server sent while it ran. */
export type LogHandler = (message: LoggingMessageNotificationParams) => void;

/**
 * Routes a server's log messages (`notifications/message`) to the call running on the session, the way
 * SessionQuestions routes questions: an MCP log message names no request, so it goes to a call only
 * when that call is the one request in flight on the session — always so for a `concurrency: 1`
 * server — and is dropped otherwise. Every call is counted, whether its caller wants logs or not, so a
 * message that may be another call's (another team's) is never handed on. A call is attached right
 * before its request is written: a message heard before that cannot be its own. (Left open: a server
 * that logs for a call after answering it, while another call runs alone — MCP gives a client no way
 * to tell; docs/semantics.md §16.)
 */
export class SessionLogs {
  private readonly calls = new Set<{ handler: LogHandler | undefined }>();

  /** Counts the running call (its handler, if its caller wants logs); returns its removal. */
  attach(handler: LogHandler | undefined): () => void {
    const entry = { handler };
    this.calls.add(entry);
    return () => this.calls.delete(entry);
  }

  /** Hands the message to the one call in flight; false when it went to nobody. */
  deliver(message: LoggingMessageNotificationParams): boolean {
    const [only, ...others] = [...this.calls];
    if (!only?.handler || others.length > 0) return false;
    only.handler(message);
    return true;
  }
}
