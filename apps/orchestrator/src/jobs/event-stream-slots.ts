/**
 * Open event streams per team on this replica. Each stream holds a socket, a Redis listener and a
 * query per announcement, so one team cannot open enough of them to starve the others.
 */
export class EventStreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly perTeam: number) {}

  /** A release function, or undefined when `team` already holds every slot it may. */
  take(team: string): (() => void) | undefined {
    const held = this.open.get(team) ?? 0;
    if (held >= this.perTeam) return undefined;
    this.open.set(team, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.open.get(team) ?? 1) - 1;
      if (now > 0) this.open.set(team, now);
      else this.open.delete(team);
    };
  }
}
