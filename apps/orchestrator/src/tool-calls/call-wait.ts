/**
 * A tool call that cannot settle until a person acts: it needs an approval before it is sent, or the
 * tool asked a question (docs/semantics.md §14–15). The run parks on it; nothing is held meanwhile.
 */
export interface CallWait {
  kind: 'approval' | 'question';
  toolCallId: string;
  server: string;
  tool: string;
  /** Epoch ms: unanswered by then, the call ends `expired`. */
  expiresAt: number;
}
