import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { SwitchyardConfig, TeamConfig } from '@switchyard/contracts';
import { CONFIG } from '../runtime/tokens.ts';

export interface Team {
  name: string;
  config: TeamConfig;
}

const digest = (key: string) => createHash('sha256').update(key).digest('hex');

/**
 * API key → team, from `teams.<name>.apiKeys`, and the operators' keys (`operators.apiKeys`). Keys
 * are held as digests, never logged.
 */
@Injectable()
export class TeamsService {
  private readonly byKeyDigest = new Map<string, Team>();
  private readonly operatorDigests: Set<string>;

  constructor(@Inject(CONFIG) private readonly config: SwitchyardConfig) {
    for (const [name, team] of Object.entries(config.teams)) {
      for (const key of team.apiKeys) this.byKeyDigest.set(digest(key), { name, config: team });
    }
    this.operatorDigests = new Set(config.operators.apiKeys.map(digest));
  }

  isOperatorKey(key: string): boolean {
    return this.operatorDigests.has(digest(key));
  }

  byApiKey(key: string): Team | undefined {
    return this.byKeyDigest.get(digest(key));
  }

  byName(name: string): Team | undefined {
    const config = this.config.teams[name];
    return config ? { name, config } : undefined;
  }
}
