/**
 * Where asynchronous work comes from, by async_hooks. Before `watching`, every resource is its own origin; while
 * watching, a resource created counts as made by the context that created it (so it has that context's origin), and
 * a promise that existed before but is resolved while watching counts as made by whoever resolved it (as does work
 * chained on that promise). An origin is thus a resource that existed before watching began: the socket a message
 * arrived on, a timer set earlier, ...
 *
 * Finer than origins, chains: each callback of a resource that existed before watching (one arrival on a socket, one
 * firing of a timer) starts a chain of its own, which every resource it creates (or promise it resolves) carries on;
 * `branch` starts a new chain in the middle of a callback, for what the callback does and creates from then on (the
 * recorder branches where an event is handed to the room's loop, to tell one event's work from the next).
 */
import { createHook, executionAsyncId } from 'node:async_hooks';

export class Causality {
  private readonly types = new Map<number, string>();
  private readonly triggers = new Map<number, number>();
  private readonly origins = new Map<number, number>();
  private readonly resolvedBy = new Map<number, number>();
  private readonly chains = new Map<number, number>();
  private readonly resolvedChains = new Map<number, number>();
  /** The running callback's chain (undefined until asked, for a callback of a resource older than watching). */
  private current: number | undefined;
  private readonly outer: (number | undefined)[] = [];
  private made = 0;
  watching = false;

  private readonly hook = createHook({
    init: (id, type, trigger) => {
      this.types.set(id, type);
      if (this.watching) {
        this.origins.set(id, this.originOf(executionAsyncId()));
        this.chains.set(id, this.chain);
      } else this.triggers.set(id, trigger);
    },
    promiseResolve: (id) => {
      if (!this.watching || this.origins.has(id)) return;
      this.resolvedBy.set(id, this.originOf(executionAsyncId()));
      this.resolvedChains.set(id, this.chain);
    },
    before: (id) => {
      this.outer.push(this.current);
      this.current = this.chains.get(id) ?? this.resolvedChains.get(this.chainTrigger(id));
    },
    after: () => {
      this.current = this.outer.pop();
    },
  });

  enable(): void {
    this.hook.enable();
  }

  disable(): void {
    this.hook.disable();
  }

  originOf(id: number): number {
    const known = this.origins.get(id) ?? this.resolvedBy.get(id);
    if (known !== undefined) return known;
    // Work chained on a promise (`then`, `await`) runs in a promise of its own, triggered by the one it waited for.
    const trigger = this.types.get(id) === 'PROMISE' ? this.triggers.get(id) : undefined;
    return (trigger === undefined ? undefined : this.resolvedBy.get(trigger)) ?? id;
  }

  /** The promise whose resolution a promise's callback descends from (itself, or the one it was chained on). */
  private chainTrigger(id: number): number {
    if (this.resolvedChains.has(id)) return id;
    return (this.types.get(id) === 'PROMISE' ? this.triggers.get(id) : undefined) ?? id;
  }

  /** The running callback's chain. */
  get chain(): number {
    this.current ??= ++this.made;
    return this.current;
  }

  /** Starts a new chain here: the rest of this callback, and what it creates from now on, carry it. */
  branch(): number {
    this.current = ++this.made;
    return this.current;
  }

  typeOf(id: number): string {
    return this.types.get(id) ?? 'root';
  }
}
