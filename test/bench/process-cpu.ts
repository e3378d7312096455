import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export function clockTicksPerSecond(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** utime + stime of a process, in clock ticks; undefined once it has exited. */
export function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** utime + stime of a process in milliseconds (0 once it has exited). */
export function cpuMsOf(pid: number): number {
  return ((cpuTicks(pid) ?? 0) * 1000) / clockTicksPerSecond();
}
