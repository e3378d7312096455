import { PROCESS_NODE_FLAGS } from '@switchyard/contracts';
import type { ModeName, ModeRss, ProcessRss, RssByModeResult } from './scenarios/rss-modes.ts';
import { mib, ratio } from './stats.ts';

type Table = (headers: string[], alignRight: boolean[], rows: string[][]) => string;
type Throughput = NonNullable<ModeRss['throughput']>;

/** The "Memory by how a process is run" table (test/bench/scenarios/rss-modes.ts), as Markdown paragraphs. */
export function renderRssByMode(result: RssByModeResult, table: Table): string[] {
  const out: string[] = [];
  const modeNamed = (name: ModeName) => result.modes.find((m) => (m.name ?? m.mode) === name);
  const source = modeNamed('source');
  const compiled = modeNamed('compiled');
  const uncapped = modeNamed('compiled-default-young-generation');
  if (source && compiled) {
    const kinds: Array<[keyof ProcessRss, string]> = [
      ['orchestrator', 'orchestrator'],
      ['worker', 'tool worker (alone)'],
      ['server', 'example MCP server (stdio)'],
    ];
    const rows = kinds.flatMap(([kind, label]) =>
      (['idle', 'load'] as const).map((state) => [
        label,
        state === 'idle' ? 'idle' : 'under load (peak)',
        mib(source[state][kind]),
        mib(compiled[state][kind]),
        ratio(compiled[state][kind], source[state][kind]),
        uncapped ? mib(uncapped[state][kind]) : '–',
        uncapped ? ratio(compiled[state][kind], uncapped[state][kind]) : '–',
      ]),
    );
    const perCall = (mode: ModeRss | undefined, pick: (t: Throughput) => number) =>
      mode?.throughput ? pick(mode.throughput) : undefined;
    const throughputRows: Array<[string, (t: Throughput) => number, (n: number) => string]> = [
      ['calls/s under that load', (t) => t.callsPerSecond, (n) => n.toFixed(0)],
      ['orchestrator CPU per call', (t) => t.orchestratorCpuMsPerCall, (n) => `${n.toFixed(2)} ms`],
      ['worker CPU per call', (t) => t.workerCpuMsPerCall, (n) => `${n.toFixed(2)} ms`],
    ];
    for (const [label, pick, format] of throughputRows) {
      const [a, b, c] = [source, compiled, uncapped].map((mode) => perCall(mode, pick));
      if (b === undefined) continue;
      rows.push([
        label,
        'under load',
        a === undefined ? '–' : format(a),
        format(b),
        a === undefined ? '–' : ratio(b, a),
        c === undefined ? '–' : format(c),
        c === undefined ? '–' : ratio(b, c),
      ]);
    }
    const { jobs, callsPerJob, toolMs } = result;
    out.push(
      '**Memory by how a process is run** (RSS): the same deployment (an orchestrator, a worker, one stdio ' +
        '`recorder` server) run from the TypeScript sources (`node --import tsx`), as the compiled JavaScript ' +
        `of \`npm run build\` (\`node ${PROCESS_NODE_FLAGS.join(' ')} dist/…js\`, as the images run it), and compiled ` +
        "without those flags (V8's default young generation, sized from the heap limit), one after the other. " +
        `Idle: started and one small job run; under load: ${jobs} concurrent batch jobs of ${callsPerJob} calls ` +
        `(${toolMs} ms each, 16 at a time on the server); CPU from /proc/<pid>/stat over the load.`,
      table(
        [
          'process',
          'state',
          'tsx',
          'compiled',
          'compiled / tsx',
          'compiled, default young generation',
          'compiled / default',
        ],
        [false, false, true, true, true, true, true],
        rows,
      ),
    );
  }

  return out;
}
