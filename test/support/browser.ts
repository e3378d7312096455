import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { REPO_ROOT, RUN_MODE } from './paths.ts';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots of the console suites, for a person to look at (git-ignored). */
export const ARTIFACTS_DIR = resolve(REPO_ROOT, 'test/artifacts');

/** How long the console may take to show what the API already has: bounds a failure only. */
export const SHOWN_MS = 30_000;

/** Opens `path` of the console at `baseUrl` and types `key` into its prompt, as a person does. */
export async function signIn(page: Page, baseUrl: string, key: string, path = '/console/'): Promise<void> {
  await page.goto(`${baseUrl}${path}`);
  await page.getByTestId('key-gate').locator('input[name=apiKey]').fill(key);
  await page.getByTestId('key-gate').locator('button[type=submit]').click();
}

/** Where a console suite saves the screenshot it calls `name`. */
export function screenshotPath(name: string): string {
  return resolve(ARTIFACTS_DIR, `console-${name}.png`);
}

/** Headless Chromium for a suite; the suite closes it in afterAll (which ends its processes). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
    ],
  });
}

/**
 * The orchestrator serves the console Vite built into apps/orchestrator/dist/console-ui. A compiled run
 * tests what `npm run build` made (as CI does); a run from sources builds the console's sources first
 * (about a second), as it runs the apps' sources, so it never tests a stale build.
 */
export async function ensureConsoleBuilt(): Promise<void> {
  if (RUN_MODE === 'compiled') {
    const index = resolve(REPO_ROOT, 'apps/orchestrator/dist/console-ui/index.html');
    if (!existsSync(index)) throw new Error(`${index} is missing: npm run build first`);
    return;
  }
  await promisify(execFile)('npm', ['run', 'build:console', '-w', 'apps/orchestrator'], {
    cwd: REPO_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
}
