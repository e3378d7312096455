#!/usr/bin/env node
// `npx switchyard …` in the repository: the CLI from its TypeScript sources (through tsx, with the
// workspace libs' sources too), so it is never a stale build; where there are no sources (a packed
// install), the compiled dist/main.js of `npm run build`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const compiled = new URL('../dist/main.js', import.meta.url);

if (!existsSync(source)) {
  await import(compiled.href);
} else {
  const child = spawn(
    process.execPath,
    // tsx as resolved from here, so the command works from any directory.
    [
      '--conditions=@switchyard/source',
      '--import',
      import.meta.resolve('tsx'),
      source,
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit' },
  );
  // Ctrl-C reaches the child too (same process group); the parent only passes on how it ended.
  process.on('SIGINT', () => {});
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? (signal ? 128 + 2 : 1);
  });
}
