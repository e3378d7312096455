import { readFileSync } from 'node:fs';
import { descendants } from '../support/processes.ts';

/** Resident set size of one process in bytes (VmRSS of /proc/<pid>/status); 0 once it is gone. */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export interface Rss {
  /** The process alone. */
  self: number;
  /** The process plus every descendant (e.g. a worker's stdio MCP server children). */
  withChildren: number;
  children: number;
}

export function rssTree(pid: number): Rss {
  const family = descendants(pid);
  const self = rssOf(pid);
  return {
    self,
    withChildren: family.reduce((sum, child) => sum + rssOf(child), self),
    children: family.length,
  };
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak seen. */
export class RssSampler {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 50,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  private sample(): void {
    this.peak = Math.max(this.peak, rssOf(this.pid));
  }

  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.peak;
  }
}
