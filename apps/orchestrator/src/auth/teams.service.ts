import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { SwitchyardConfig, TeamConfig } from '@switchyard/contracts';
import { CONFIG } from '../runtime/tokens.ts';

export interface Team {
  name: string;
  config: TeamConfig;
}

/** A key as an audit trail names it: which list and position, and a digest prefix — never the key. */
export interface KeyIdentity {
  team: Team;
  label: string;
  /** The key is one of the team's `approverKeys`. */
  approver: boolean;
}

const digest = (key: string) => createHash('sha256').update(key).digest('hex');

/**
 * API key → team, from `teams.<name>.apiKeys`, and the operators' keys (`operators.apiKeys`). Keys
 * are held as digests, never logged.
 */
@Injectable()
export class TeamsService {
  private readonly byKeyDigest = new Map<string, Team>();
  private readonly identities = new Map<string, KeyIdentity>();
  private readonly operatorDigests: Set<string>;

  constructor(@Inject(CONFIG) private readonly config: SwitchyardConfig) {
    for (const [name, team] of Object.entries(config.teams)) {
      for (const key of team.apiKeys) this.byKeyDigest.set(digest(key), { name, config: team });
      const keyLists = { apiKeys: team.apiKeys, approverKeys: team.approverKeys };
      for (const [list, keys] of Object.entries(keyLists)) {
        keys.forEach((key, index) => {
          this.identities.set(digest(key), {
            team: { name, config: team },
            label: `${name}/${list}[${index}] (sha256:${digest(key).slice(0, 12)})`,
            approver: list === 'approverKeys',
          });
        });
      }
    }
    this.operatorDigests = new Set(config.operators.apiKeys.map(digest));
  }

  isOperatorKey(key: string): boolean {
    return this.operatorDigests.has(digest(key));
  }

  byApiKey(key: string): Team | undefined {
    return this.byKeyDigest.get(digest(key));
  }

  /** Who a team key (API or approver key) is, for the audit trail of answers and approvals. */
  identify(key: string): KeyIdentity | undefined {
    return this.identities.get(digest(key));
  }

  byName(name: string): Team | undefined {
    const config = this.config.teams[name];
    return config ? { name, config } : undefined;
  }
}
