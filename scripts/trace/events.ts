/**
 * Which event each entry of a recording belongs to. The room's loop is where events come together: an event is handed
 * to it (`deliver`) and later taken (`take`). An event's work is what descends from it (causality.ts chains): for a
 * platform event, from its arrival on the socket to the loop; then the loop's decision on it and the effects that
 * decision hands on, up to the next event handed to the loop from within that work (a turn's answer, a post's
 * outcome), which starts a chain of its own (what the same callback does after handing it on counts with it too). An
 * event taken later by a loop still busy with another (it was queued) is taken in that one's chain: there the next
 * event waiting starts its own chain. Work that never reaches the loop belongs to no event.
 */
import type { LoopEvent } from './protocol.js';

/** The room's loop: its file, where an event is handed to it, and where it takes the next one. */
export const ROOM_LOOP = {
  file: 'src/bridge/loop/room-actor.ts',
  deliver: 'RoomActor.deliver',
  take: 'RoomActor.take',
} as const;

export type Loop = { readonly file: string; readonly deliver: string; readonly take: string };

/** The composition root: the function whose closures should stay off the route. */
export const COMPOSITION = { file: 'src/bridge/bridge.ts', fn: 'createBridge' } as const;

/** The running callback's chain, and a way to start a new one from here (Causality). */
export interface Chains {
  readonly chain: number;
  branch(): number;
}

export class EventLedger {
  readonly events: LoopEvent[] = [];
  private readonly byChain = new Map<number, number>();
  /** Handed to the loop, not yet taken, in the order handed. */
  private readonly waiting: number[] = [];

  constructor(private readonly loop: Loop = ROOM_LOOP) {}

  /** Called at each entry before it is recorded: returns the chain the entry is in (a new one where work turns). */
  enter(file: string, fn: string, argument: unknown, chains: Chains): number {
    if (file !== this.loop.file) return chains.chain;
    if (fn === this.loop.deliver) {
      // The arrival's work leads here and is this event's; work already of an event hands a new one on.
      const chain = this.byChain.has(chains.chain) ? chains.branch() : chains.chain;
      const id = this.events.length + 1;
      this.events.push({ id, type: typeOf(argument) });
      this.byChain.set(chain, id);
      this.waiting.push(id);
      return chain;
    }
    if (fn === this.loop.take) {
      const own = this.byChain.get(chains.chain);
      const at = own === undefined ? -1 : this.waiting.indexOf(own);
      if (at >= 0) {
        this.waiting.splice(at, 1);
        return chains.chain;
      }
      const next = this.waiting.shift();
      if (next === undefined) return chains.chain;
      const chain = chains.branch();
      this.byChain.set(chain, next);
      return chain;
    }
    return chains.chain;
  }

  /** The event a chain's work belongs to (none for work that never reached the loop). */
  eventOf(chain: number): number | undefined {
    return this.byChain.get(chain);
  }
}

function typeOf(argument: unknown): string | undefined {
  if (typeof argument !== 'object' || argument === null) return undefined;
  const type = (argument as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}
