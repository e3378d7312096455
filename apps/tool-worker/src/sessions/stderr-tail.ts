/** Keeps the last few KiB a stdio server wrote to stderr, for the error that explains its death. */
export class StderrTail {
  private chunks: string[] = [];
  private size = 0;

  constructor(private readonly limitBytes = 16 * 1024) {}

  push(chunk: Buffer | string): void {
    const text = chunk.toString();
    this.chunks.push(text);
    this.size += text.length;
    while (this.size > this.limitBytes && this.chunks.length > 1) {
      this.size -= (this.chunks.shift() as string).length;
    }
  }

  /** The last `lines` non-empty lines. */
  tail(lines = 20): string {
    return this.chunks.join('').split('\n').filter(Boolean).slice(-lines).join('\n').slice(-this.limitBytes);
  }
}
