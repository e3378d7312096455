/**
 * The client command the MCP conformance suite runs for a client scenario (`conformance client
 * --command`): it appends the scenario server's URL and passes the scenario's context in
 * MCP_CONFORMANCE_CONTEXT. The client under test is a Switchyard worker, which a command cannot be, so
 * this hands both to the test that started the suite (SWITCHYARD_CONFORMANCE_BRIDGE, e2e/oauth-conformance)
 * and waits while that test has a worker call the server. The test starts and stops every process;
 * this one only relays, and exits 0 when the call succeeded. Plain TypeScript that Node runs as it is.
 */
const bridge = process.env.SWITCHYARD_CONFORMANCE_BRIDGE;
const serverUrl = process.argv.at(-1);
if (!bridge || !serverUrl) {
  process.stderr.write('usage: SWITCHYARD_CONFORMANCE_BRIDGE=<url> conformance-bridge <server url>\n');
  process.exit(2);
}
const answer = await fetch(bridge, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    serverUrl,
    scenario: process.env.MCP_CONFORMANCE_SCENARIO,
    context: JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}'),
  }),
});
process.stdout.write(`${await answer.text()}\n`);
process.exit(answer.ok ? 0 : 1);
