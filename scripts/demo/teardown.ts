/**
 * Everything a script started, stopped once in reverse order of starting: at its end, when it fails,
 * and on SIGINT / SIGTERM (without a handler Node would exit at once and leave the embedded PostgreSQL,
 * which runs in its own process group, and the workers' MCP servers behind).
 */
export class Teardown {
  private readonly steps: { what: string; stop: () => Promise<void> }[] = [];
  private running: Promise<void> | undefined;

  /** Adds a step; once the teardown has begun, a step added late runs at once. */
  add(what: string, stop: () => Promise<void>): void {
    this.steps.push({ what, stop });
    if (this.running) this.running = this.running.then(() => this.runStep({ what, stop }));
  }

  get started(): boolean {
    return this.running !== undefined;
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of [...this.steps].reverse()) await this.runStep(step);
    })();
    return this.running;
  }

  /**
   * On the first SIGINT or SIGTERM: tear down, then exit with `exitCode`; a second signal exits at once
   * (1), for when stopping hangs.
   */
  exitOnSignal(exitCode: number, announce: (signal: NodeJS.Signals) => void = () => undefined): void {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.started) {
        console.error(`${signal} again: exiting without waiting for the rest to stop`);
        process.exit(1);
      }
      announce(signal);
      this.run().then(() => process.exit(exitCode));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }

  private async runStep(step: { what: string; stop: () => Promise<void> }): Promise<void> {
    try {
      await step.stop();
    } catch (error) {
      console.error(
        `stopping ${step.what} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
