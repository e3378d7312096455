import { z } from 'zod';

/** Who a key is, as `GET /v1/whoami` answers: the console picks its pages and buttons by it. */
export const ViewerSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('team'), team: z.string() }),
    z.object({ kind: z.literal('operator') }),
  ])
  .meta({
    id: 'Viewer',
    description:
      "A team's key (its jobs: read and act on them) or an operator key (every team's jobs and the fleet, read-only)",
  });
export type ViewerView = z.output<typeof ViewerSchema>;
