import { readFile, stat } from 'node:fs/promises';
import type { OAuthCredential } from '@switchyard/contracts';

/**
 * The secret a credential was handed and presents at its token request: an operator's refresh token, the
 * platform's workload identity JWT, the team's ID token. Either a value from the config (`${VAR}`) or a
 * file, read when a token is needed and read again once it changed: a Kubernetes projected token is
 * rotated by the kubelet (a new file swapped in under the same path), a mounted secret by its operator.
 */
export class GivenSecret {
  /** What the file held when last read, and which version of the file that was. */
  private last: { version: string; value: string } | undefined;

  private constructor(
    private readonly value: string | undefined,
    /** The config key, for an error that names it. */
    private readonly key: string,
    private readonly path: string | undefined,
  ) {}

  /** The credential's given secret, or undefined for a type that has none (its own secret is in the config). */
  static of(credential: OAuthCredential): GivenSecret | undefined {
    switch (credential.type) {
      case 'refresh_token':
        return new GivenSecret(credential.refreshToken, 'refreshTokenFile', credential.refreshTokenFile);
      case 'workload_identity':
        return new GivenSecret(credential.assertion, 'assertionFile', credential.assertionFile);
      case 'enterprise_managed_authorization':
        return new GivenSecret(credential.idToken, 'idTokenFile', credential.idTokenFile);
      default:
        return undefined;
    }
  }

  /** The secret now: the value, or the file's content (read again only when the file changed). */
  async read(): Promise<string> {
    if (this.value !== undefined || this.path === undefined) return this.value ?? '';
    try {
      const version = await this.version(this.path);
      if (this.last?.version !== version) {
        this.last = { version, value: (await readFile(this.path, 'utf8')).trim() };
      }
      return this.last.value;
    } catch (error) {
      throw new Error(`cannot read ${this.key} ${this.path}: ${(error as NodeJS.ErrnoException).code}`);
    }
  }

  /**
   * Whether the file is no longer what read() last returned: a token refused with the old one is worth
   * asking for again at once with the new one. A value from the config never changes.
   */
  async changed(): Promise<boolean> {
    if (!this.path || !this.last) return false;
    return (await this.version(this.path).catch(() => this.last?.version)) !== this.last.version;
  }

  /** stat follows the symlink a projected token is reached by, so a swapped-in file is a new version. */
  private async version(path: string): Promise<string> {
    const { ino, size, mtimeMs } = await stat(path);
    return `${ino}:${size}:${mtimeMs}`;
  }
}
