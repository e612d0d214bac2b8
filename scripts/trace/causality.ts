/**
 * Where asynchronous work comes from, by async_hooks. Before `watching`, every resource is its own origin; while
 * watching, a resource created counts as made by the context that created it (so it has that context's origin), and
 * a promise that existed before but is resolved while watching counts as made by whoever resolved it (as does work
 * chained on that promise). An origin is thus a resource that existed before watching began: the socket a message
 * arrived on, a timer set earlier, ...
 */
import { createHook, executionAsyncId } from 'node:async_hooks';

export class Causality {
  private readonly types = new Map<number, string>();
  private readonly triggers = new Map<number, number>();
  private readonly origins = new Map<number, number>();
  private readonly resolvedBy = new Map<number, number>();
  watching = false;

  private readonly hook = createHook({
    init: (id, type, trigger) => {
      this.types.set(id, type);
      if (this.watching) this.origins.set(id, this.originOf(executionAsyncId()));
      else this.triggers.set(id, trigger);
    },
    promiseResolve: (id) => {
      if (this.watching && !this.origins.has(id)) this.resolvedBy.set(id, this.originOf(executionAsyncId()));
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

  typeOf(id: number): string {
    return this.types.get(id) ?? 'root';
  }
}
