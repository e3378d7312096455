/**
 * The Node.js flags every Switchyard process (orchestrator, tool worker) runs with, wherever it is started:
 * the images' `CMD`, `npm run orchestrator` / `npm run worker`, the demo and `npm run dev`, and the test
 * and benchmark deployments (held together by deploy/test/manifests.test.ts).
 *
 * `--max-semi-space-size=8` caps each of V8's two young-generation semi-spaces at 8 MiB. V8 sizes them
 * from the heap limit (up to 64 MiB each on a machine with a 4 GiB limit); start-up, which loads
 * ≈ 3,500 modules, grows them to that maximum and they stay committed afterwards, ≈ 128 MiB of RSS that
 * holds nothing after a collection (docs/capacity.md, "Process memory"). The cost is more, smaller
 * scavenges: measured side by side by `npm run bench` ("Memory by how a process is run").
 * It cannot be set at run time (`v8.setFlagsFromString` comes too late for the new space), so it is a
 * command-line flag; an operator who prefers the CPU to the memory overrides it with `NODE_OPTIONS`
 * (V8 reads it after the command line).
 */
export const PROCESS_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];
