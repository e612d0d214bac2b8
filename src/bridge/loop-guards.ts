import { PAIR_GUARD, pairKey, pairPaused } from '../room/guards.js';
import type { Room } from './rooms.js';

/**
 * The shell's side of the loop guards: the per-pair pause (told to the humans once per pair and room)
 * and the agents whose calls failed in the current round (skipped for the rest of it).
 */
export class LoopGuards {
  private readonly told = new Set<string>();
  private readonly failed = new Map<string, { epoch: number; agents: Set<string> }>();

  constructor(
    private readonly deps: {
      readonly isAgent: (name: string) => boolean;
      readonly clock: () => number;
      readonly notify: (room: Room, text: string) => void;
    },
  ) {}

  /** These two agents exchanged too much too fast, across human messages: they no longer wake each other. */
  paused(room: Room, a: string, b: string): boolean {
    if (!this.deps.isAgent(a) || !this.deps.isAgent(b)) return false;
    return pairPaused(room.state.history(), a, b, this.deps.clock(), PAIR_GUARD);
  }

  /** Tells the humans, once, that a pair is paused. */
  tellPaused(room: Room, a: string, b: string): void {
    const key = `${room.key}/${pairKey(a, b)}`;
    if (this.told.has(key)) return;
    this.told.add(key);
    this.deps.notify(
      room,
      `@human @${a} and @${b} have exchanged more than ${PAIR_GUARD.limit} messages in ` +
        `${PAIR_GUARD.windowMs / 60_000} minutes, so they no longer wake each other for now. ` +
        'Mention one of them to continue.',
    );
  }

  /** An agent's call failed in this round (the room's epoch): it is skipped until a human speaks. */
  markFailed(room: Room, agent: string): void {
    const epoch = room.actor.epoch;
    let entry = this.failed.get(room.key);
    if (!entry || entry.epoch !== epoch) {
      entry = { epoch, agents: new Set() };
      this.failed.set(room.key, entry);
    }
    entry.agents.add(agent.toLowerCase());
  }

  failedThisRound(room: Room, agent: string): boolean {
    const entry = this.failed.get(room.key);
    return entry !== undefined && entry.epoch === room.actor.epoch && entry.agents.has(agent.toLowerCase());
  }

  /** After /reset: the room starts afresh. */
  forget(room: Room): void {
    for (const key of [...this.told]) if (key.startsWith(`${room.key}/`)) this.told.delete(key);
    this.failed.delete(room.key);
  }
}
