import { z } from 'zod';

/** W3C trace context as carried in job data and in MCP `params._meta`. */
export const TraceCarrierSchema = z.object({
  traceparent: z.string().max(512).optional(),
  tracestate: z.string().max(512).optional(),
  baggage: z.string().max(8192).optional(),
});
export type TraceCarrier = z.infer<typeof TraceCarrierSchema>;

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The trace id inside a traceparent, or undefined when there is none or it is malformed. */
export function traceIdOf(carrier: TraceCarrier | undefined): string | undefined {
  return carrier?.traceparent ? TRACEPARENT.exec(carrier.traceparent)?.[1] : undefined;
}
