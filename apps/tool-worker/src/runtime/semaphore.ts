/**
 * Bounds the requests in flight on one MCP session. Waiters are served in arrival order so a
 * tools/list refresh cannot starve behind a stream of calls.
 */
export class Semaphore {
  private available: number;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly capacity: number) {
    this.available = capacity;
  }

  get inUse(): number {
    return this.capacity - this.available;
  }

  tryAcquire(): boolean {
    if (this.available === 0) return false;
    this.available -= 1;
    return true;
  }

  acquire(): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.available += 1;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }
}
