import { type Context, context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
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

/** The W3C context of `ctx` (default: the active one) as a carrier, for job data and MCP `_meta`. */
export function carrierFrom(ctx: Context = context.active()): TraceCarrier {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return TraceCarrierSchema.parse(carrier);
}

/** The context a carrier describes, to parent (or link) the spans of whoever received it. */
export function contextFrom(carrier: TraceCarrier | undefined, base: Context = ROOT_CONTEXT): Context {
  return carrier ? propagation.extract(base, carrier) : base;
}
