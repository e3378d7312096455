import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a Redis primary: the address the sentinels monitor, the replica
 * replicates from and the clients are sent to. Every connection passes through unchanged, but the
 * replication link — the connection that sent SYNC/PSYNC — can be held: from `hold()` on, bytes from the
 * primary to the replica are kept instead of forwarded, so the replica stays exactly at the offset it
 * had: replication lag on demand, for as long as the test wants, without timing guesses. The replica's
 * own bytes (REPLCONF ACK) still flow, so the primary keeps counting it as a connected replica that
 * merely has not acknowledged the newer writes: the case WAIT is for. (Sentinel would "fix" a replica
 * replicating from any other address than the monitored one, so the gate must be that address.)
 *
 * When the primary goes away (SIGKILL) every connection is cut at once and the held bytes are dropped:
 * what a crashed primary had not yet sent is lost, as in a real failover.
 */
export class ReplicationGate {
  private readonly server: Server;
  private readonly pairs = new Set<{
    replica: Socket;
    primary: Socket;
    held: Buffer[];
    replication: boolean;
  }>();
  private holding = false;
  /** Bytes the gate is holding right now (0 while it forwards). */
  heldBytes = 0;

  private constructor(primaryPort: number) {
    this.server = createServer((replica) => {
      const primary = createConnection({ host: '127.0.0.1', port: primaryPort });
      const pair = { replica, primary, held: [] as Buffer[], replication: false };
      this.pairs.add(pair);
      replica.on('data', (chunk: Buffer) => {
        // A replica's handshake ends with PSYNC (SYNC on old ones); clients never send either.
        if (!pair.replication && /\r\n\$[45]\r\n(PSYNC|SYNC)\r\n/i.test(chunk.toString('latin1'))) {
          pair.replication = true;
        }
        primary.write(chunk);
      });
      primary.on('data', (chunk: Buffer) => {
        if (this.holding && pair.replication) {
          pair.held.push(chunk);
          this.heldBytes += chunk.length;
        } else replica.write(chunk);
      });
      const cut = () => {
        this.pairs.delete(pair);
        replica.destroy();
        primary.destroy();
      };
      primary.on('close', cut);
      primary.on('error', cut);
      replica.on('close', cut);
      replica.on('error', cut);
    });
  }

  static async start(primaryPort: number): Promise<ReplicationGate> {
    const gate = new ReplicationGate(primaryPort);
    await new Promise<void>((resolve, reject) => {
      gate.server.once('error', reject);
      gate.server.listen(0, '127.0.0.1', resolve);
    });
    return gate;
  }

  get port(): number {
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('replication gate is not listening');
    return address.port;
  }

  /** From now on the replica receives nothing from the primary (clients are not affected). */
  hold(): void {
    this.holding = true;
  }

  /** Forwards what was held, in order, and everything after it. */
  release(): void {
    this.holding = false;
    this.heldBytes = 0;
    for (const pair of this.pairs) for (const chunk of pair.held.splice(0)) pair.replica.write(chunk);
  }

  async close(): Promise<void> {
    for (const { replica, primary } of this.pairs) {
      replica.destroy();
      primary.destroy();
    }
    this.pairs.clear();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
