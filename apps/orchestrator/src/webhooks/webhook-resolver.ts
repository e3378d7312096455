import { type ResolveHost, systemResolve } from '../egress/webhook-target-check.ts';

/** How webhook hosts are resolved (a provider, so a test can make a name resolve anywhere). */
export const WEBHOOK_RESOLVER = Symbol('WEBHOOK_RESOLVER');

export const webhookResolverProvider = { provide: WEBHOOK_RESOLVER, useValue: systemResolve as ResolveHost };
