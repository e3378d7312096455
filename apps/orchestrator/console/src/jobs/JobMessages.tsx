import type { Message } from '../api/types.ts';

/** An agent job's conversation, in the API's role vocabulary. */
export function JobMessages({ messages }: { messages: Message[] }) {
  return (
    <>
      <h2>Messages</h2>
      <ol className="messages" data-testid="messages">
        {messages.map((message, index) => (
          // The transcript is append-only: the index is the message's identity.
          // biome-ignore lint/suspicious/noArrayIndexKey: see above
          <li key={index} className={`message role-${message.role}`} data-role={message.role}>
            <span className="role">{message.role}</span>
            {message.content && <pre>{message.content}</pre>}
            {message.toolCalls?.map((call) => (
              <code key={call.id ?? call.name} className="tool-request">
                → {call.name}({JSON.stringify(call.args)})
              </code>
            ))}
          </li>
        ))}
      </ol>
    </>
  );
}
