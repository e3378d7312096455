/**
 * Where results go: people get lines and tables, scripts (`--json`) one JSON document per command
 * (or one JSON object per line while watching). Results go to stdout, diagnostics to stderr.
 */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly stdout: (text: string) => void = (text) => process.stdout.write(text),
    private readonly stderr: (text: string) => void = (text) => process.stderr.write(text),
  ) {}

  /** A command's result: `human()` for people, `document` for --json. */
  result(document: unknown, human: () => string): void {
    this.stdout(this.json ? `${JSON.stringify(document, null, 2)}\n` : `${human()}\n`);
  }

  /** One JSON object per line (--json) or one line of text. */
  line(document: unknown, human: () => string): void {
    this.stdout(this.json ? `${JSON.stringify(document)}\n` : `${human()}\n`);
  }

  /** A diagnostic (never part of the result). */
  note(text: string): void {
    this.stderr(`${text}\n`);
  }
}
