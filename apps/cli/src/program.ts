import { SwitchyardApiError, SwitchyardConnectionError } from '@switchyard/client';
import { Command, CommanderError } from 'commander';
import type { Act } from './action.ts';
import { addCatalogCommands } from './catalog/catalog-commands.ts';
import { type ConnectionOptions, connect, DEFAULT_URL } from './connection.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { addJobCommands } from './jobs/job-commands.ts';
import { addModelsCommand } from './models/models-command.ts';
import { Output } from './output/output.ts';
import { UsageError } from './usage-error.ts';

interface GlobalOptions extends ConnectionOptions {
  json?: boolean;
}

/**
 * Runs the command line and answers its exit code (docs: README "The CLI"): usage errors 2, API
 * refusals 6, no connection 7, and for commands that wait on a job, the code of how it ended.
 */
export async function runCli(argv: string[]): Promise<ExitCode> {
  let code: ExitCode = EXIT.ok;
  // Known before parsing, so that even a usage error is reported in the form asked for.
  const out = new Output(argv.includes('--json'));
  const program = new Command('switchyard')
    .description('Submit and follow Switchyard jobs; see the tools, MCP servers and models behind them')
    .option('--url <url>', `the orchestrator (env SWITCHYARD_URL, default ${DEFAULT_URL})`)
    .option('--api-key <key>', "a team's API key (env SWITCHYARD_API_KEY)")
    .option('--json', 'print JSON for scripts (watch: one JSON object per line)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
    });

  /** Each action gets the client and the output; what it returns is the exit code. */
  const act: Act =
    (run) =>
    async (...args) => {
      const command = args.at(-1) as Command;
      const client = connect(command.optsWithGlobals<GlobalOptions>());
      code = (await run(client, ...args)) ?? EXIT.ok;
    };

  addJobCommands(program, act, out);
  addCatalogCommands(program, act, out);
  addModelsCommand(program, act, out);

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    return failure(error, out);
  }
}

/** Says what went wrong (a problem's details as JSON with --json) and picks the exit code. */
function failure(error: unknown, out: Output): ExitCode {
  if (error instanceof CommanderError) {
    // Commander printed its message already; --help and --version end here with 0.
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof UsageError) {
    out.note(`error: ${error.message}`);
    return EXIT.usage;
  }
  if (error instanceof SwitchyardApiError) {
    out.note(
      out.json
        ? JSON.stringify({ error: error.message, status: error.status, problem: error.problem ?? null })
        : `error: ${error.message}`,
    );
    return EXIT.apiError;
  }
  if (error instanceof SwitchyardConnectionError) {
    out.note(`error: ${error.message}`);
    return EXIT.unreachable;
  }
  out.note(`error: ${error instanceof Error ? error.message : String(error)}`);
  return EXIT.unreachable;
}
