import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Where Debian's libfaketime puts its preload library (multiarch dir, or the old flat one). */
function libfaketime(): string | undefined {
  const candidates = ['/usr/lib/faketime/libfaketime.so.1'];
  for (const dir of readdirSync('/usr/lib', { withFileTypes: true })) {
    if (dir.isDirectory()) candidates.push(join('/usr/lib', dir.name, 'faketime', 'libfaketime.so.1'));
  }
  return candidates.find((path) => existsSync(path));
}

/**
 * The environment that runs a process with its clock moved by `offset` (libfaketime syntax: '+400s',
 * '-2m'): what `faketime -f <offset> node …` does, without the wrapper process — `faketime` forks and
 * does not pass signals on, so a test's SIGTERM would orphan the worker instead of stopping it. Throws,
 * naming the fix, when faketime is not installed (CI installs it: .ci/run).
 */
export function fakeTimeEnv(offset: string): Record<string, string> {
  let installed = true;
  try {
    execFileSync('faketime', ['-f', offset, 'true'], { stdio: 'ignore' });
  } catch {
    installed = false;
  }
  const library = libfaketime();
  if (!installed || !library) {
    throw new Error(
      'faketime is not installed (or its libfaketime.so.1 was not found): the clock-skew tests need it to run a worker with a clock that is off. Install it: apt-get install faketime',
    );
  }
  // DONT_FAKE_MONOTONIC: a fixed offset changes no duration anyway; the monotonic clock stays the host's.
  return { LD_PRELOAD: library, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}
