/**
 * The context manager tracing installs: the active context lasts for the synchronous part of `context.with` only.
 * Node 20's `AsyncLocalStorage` (the SDK's default) hooks every promise the process makes, the platforms' clients'
 * and the model client's too, and was most of what tracing cost a message. The bridge carries a trace explicitly
 * instead, where its work goes asynchronous: the traceparent on an inbound event and in the room's state, the turn's
 * span to its model calls and tool runs, the trace ids to the turn's log lines.
 */
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';

export class SyncContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const before = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = before;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}
