import type { JobEvent } from '@switchyard/client';

/** One line per event of a job, for people watching it: when, what, where, how it ended, how long. */
export function progressLine(event: JobEvent): string {
  const data = event.data as { at?: string };
  const time = data.at ? data.at.slice(11, 23) : '            ';
  return `${time}  ${describe(event)}`;
}

function describe(event: JobEvent): string {
  switch (event.event) {
    case 'status':
      return `job ${event.data.status}${event.data.error ? `: ${event.data.error}` : ''}`;
    case 'step':
      return `model step ${event.data.step}`;
    case 'message':
      return `${event.data.role}: ${oneLine(event.data.content)}`;
    case 'tool_call.dispatched': {
      // A server that records a held call's state with the event: nothing was sent yet.
      const state = (event.data as { state?: string }).state;
      if (state === 'awaiting_approval' || state === 'awaiting_input')
        return `⏸ ${event.data.tool} [${event.data.id}] ${state.replace('_', ' ')}`;
      return `→ ${event.data.tool} [${event.data.id}] dispatched${event.data.server ? ` to ${event.data.server}` : ''}`;
    }
    case 'tool_call.finished': {
      const call = event.data;
      const mark = call.status === 'ok' ? '✓' : '✗';
      const where = `${call.server ? ` on ${call.server}` : ''}${call.workerId ? ` by ${call.workerId}` : ''}`;
      return `${mark} ${call.tool} [${call.id}] ${call.status}${where} (executed ${call.executed}, attempts ${call.attempts}, queued ${ms(call.queuedMs)}, ran ${ms(call.runMs)})`;
    }
    case 'tool_call.progress': {
      const call = event.data;
      const share = call.total ? ` ${Math.floor((call.progress / call.total) * 100)}%` : ` ${call.progress}`;
      return `… ${call.server}__${call.tool} [${call.toolCallId}]${share}${call.message ? ` ${oneLine(call.message)}` : ''}`;
    }
    case 'other':
      return otherEvent(event.name, event.data as Record<string, unknown>);
  }
}

/** Events the document does not describe yet, shown readably when known, else as they came. */
function otherEvent(name: string, data: Record<string, unknown>): string {
  const call = `${data.server}__${data.tool} [${data.toolCallId}]`;
  // Held for a person: nothing was sent (an approval) or the call stopped at the tool's question.
  if (name === 'input_required' && data.kind === 'approval')
    return `⏸ ${call} awaiting approval of ${JSON.stringify(data.arguments ?? {})} (switchyard jobs approve <job> ${data.toolCallId})`;
  if (name === 'input_required') {
    const question = (data.question ?? {}) as { message?: string };
    return `⏸ ${call} awaiting input: ${oneLine(String(question.message ?? ''))} (switchyard jobs answer <job> --call ${data.toolCallId})`;
  }
  const { at: _at, ...rest } = data;
  return `${name} ${JSON.stringify(rest)}`;
}

const ms = (value: number) => `${Math.round(value)} ms`;

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
