import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilAnnounced } from '../support/announcements.ts';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

const TOKEN = 'ALPHA-BEARER-TOKEN-5c1f9e';

/**
 * docs/semantics.md §5: an outcome never quotes a server's stderr. Team alpha's call makes a shared stdio
 * server print alpha's token to stderr and die; team beta's next call on it is refused by the circuit
 * while the server is down, and nothing beta reads — its job record, its event stream — carries the
 * token. The operator view keeps the stderr tail for diagnosis.
 */
describe("a shared server's stderr stays out of other teams' outcomes", () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;

  beforeAll(async () => {
    deployment = new Deployment(
      'stderr-privacy',
      () => ({
        shared: exampleServer('crashy', {
          // The circuit opens as soon as every session is reconnecting, and the restart waits long
          // enough for beta's call to find it open.
          unavailableAfterMs: 0,
          reconnect: { initialDelayMs: 15_000, maxDelayMs: 15_000 },
        }),
      }),
      {
        teams: {
          alpha: { apiKeys: [TEAM_KEYS.alpha] },
          beta: { apiKeys: [TEAM_KEYS.beta] },
        },
      },
    );
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator('o-stderr-privacy');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it("keeps alpha's token out of beta's outcome, job and events, and shows it to operators", async () => {
    const alpha = orchestrator.api('alpha');
    const beta = orchestrator.api('beta');
    const operator = orchestrator.api('operator');
    const crashed = await alpha.submit({
      kind: 'batch',
      calls: [{ tool: 'shared__crash', arguments: { stderr: `handling a request with ${TOKEN}` } }],
    });
    expect(crashed.status).toBe(201);
    console.log('ALPHA', JSON.stringify(await alpha.finished(crashed.body.id)));
    // The operator view has the stderr tail once the worker's heartbeat reports the dead session.
    await untilAnnounced(
      deployment.redis,
      deployment.prefix,
      async () => {
        const servers = (await operator.request('GET', '/v1/servers')).body.servers as Json[];
        const shared = servers.find((server) => server.name === 'shared');
        return shared?.availability === 'down' && JSON.stringify(shared.sessions).includes(TOKEN);
      },
      "the shared server down, with alpha's token in the operator view",
    );

    const submitted = await beta.submit({
      kind: 'batch',
      calls: [{ tool: 'shared__whoami', arguments: {} }],
    });
    expect(submitted.status).toBe(201);
    const id: string = submitted.body.id;
    const events = await beta.events(id);
    const job = await beta.job(id);
    const outcome = JSON.stringify(job);
    // The call did reach the path that explains why the server is down.
    expect(outcome).toContain('"unavailable"');
    expect(outcome).not.toContain(TOKEN);
    expect(outcome).toMatch(/exited and is being restarted/);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    const raw = await beta.request('GET', `/v1/jobs/${id}`);
    expect(JSON.stringify(raw.body)).not.toContain(TOKEN);
  });
});
