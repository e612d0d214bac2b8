/**
 * Prometheus metrics (prom-client), one registry for the process. Counted at the edges where
 * possible: the adapters (wrapped in main.ts), the LLM client, the tool loop and the sandbox
 * (wrapped in main.ts); the shell's own events (turns, passes, hand-backs) by one-line calls.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { AdapterSink, ChatAdapter, Sandbox, StreamingPost } from './ports.js';

export const registry = new Registry();

const PREFIX = 'roundtable_';

export const metrics = {
  roomLeases: new Gauge({
    name: `${PREFIX}room_leases_held`,
    help: 'Rooms whose lease this bridge holds (bridges sharing DATABASE_URL)',
    registers: [registry],
  }),
  messagesIn: new Counter({
    name: `${PREFIX}messages_in_total`,
    help: 'Platform messages handed to the bridge, per platform',
    labelNames: ['platform'] as const,
    registers: [registry],
  }),
  messagesOut: new Counter({
    name: `${PREFIX}messages_out_total`,
    help: 'Messages the bridge posted (agent replies and its own), per platform',
    labelNames: ['platform'] as const,
    registers: [registry],
  }),
  agentTurns: new Counter({
    name: `${PREFIX}agent_turns_total`,
    help: 'Agent turns started, per agent',
    labelNames: ['agent'] as const,
    registers: [registry],
  }),
  passes: new Counter({
    name: `${PREFIX}passes_total`,
    help: 'Turns that ended in [pass], per agent',
    labelNames: ['agent'] as const,
    registers: [registry],
  }),
  handBacks: new Counter({
    name: `${PREFIX}hand_backs_total`,
    help: 'Control handed back to the humans, per reason (turn limit, world pass, agent error, /pass, ...)',
    labelNames: ['reason'] as const,
    registers: [registry],
  }),
  llmCalls: new Counter({
    name: `${PREFIX}llm_calls_total`,
    help: 'Calls to the model endpoint (retries inside a call not counted), per agent',
    labelNames: ['agent'] as const,
    registers: [registry],
  }),
  llmErrors: new Counter({
    name: `${PREFIX}llm_errors_total`,
    help: 'Calls to the model endpoint that failed (after retries), per agent',
    labelNames: ['agent'] as const,
    registers: [registry],
  }),
  llmSeconds: new Histogram({
    name: `${PREFIX}llm_call_seconds`,
    help: 'Duration of a call to the model endpoint, retries included, per agent',
    labelNames: ['agent'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80],
    registers: [registry],
  }),
  llmTokens: new Counter({
    name: `${PREFIX}llm_tokens_total`,
    help: 'Tokens the endpoint reported, per agent and kind (input, cached input, output)',
    labelNames: ['agent', 'kind'] as const,
    registers: [registry],
  }),
  toolRuns: new Counter({
    name: `${PREFIX}tool_runs_total`,
    help: 'Tool calls run, per agent and tool',
    labelNames: ['agent', 'tool'] as const,
    registers: [registry],
  }),
  inboundHeld: new Gauge({
    name: `${PREFIX}inbound_held`,
    help: 'Platform messages and commands kept in memory because the store could not take them yet (tried again)',
    registers: [registry],
  }),
  inboundLost: new Counter({
    name: `${PREFIX}inbound_lost_total`,
    help: 'Platform messages not kept while the store failed (past the bound); the next start reads them again',
    registers: [registry],
  }),
  storeFailures: new Counter({
    name: `${PREFIX}store_failures_total`,
    help: "Tries at storing a room's decision that failed (a full disk, a lock held too long); each is tried again",
    registers: [registry],
  }),
  postsWaiting: new Gauge({
    name: `${PREFIX}posts_waiting`,
    help: 'Posts that failed for a reason that passes (5xx, 429, network) and wait for their next try',
    registers: [registry],
  }),
  postRetries: new Counter({
    name: `${PREFIX}post_retries_total`,
    help: 'Posts tried again after a failure that passes, per platform',
    labelNames: ['platform'] as const,
    registers: [registry],
  }),
  postsRefused: new Counter({
    name: `${PREFIX}posts_refused_total`,
    help: 'Posts the platform refused for good (missing access, unknown channel, invalid), per platform',
    labelNames: ['platform'] as const,
    registers: [registry],
  }),
  sandboxExecSeconds: new Histogram({
    name: `${PREFIX}sandbox_exec_seconds`,
    help: 'Duration of a sandbox command, per outcome (ok, exit code not 0, timeout, error)',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [registry],
  }),
  spendStopped: new Counter({
    name: `${PREFIX}spend_calls_refused_total`,
    help: 'Model calls not made because they did not fit in a spending limit, per limit (bridge, room, agent)',
    labelNames: ['limit'] as const,
    registers: [registry],
  }),
};

let processMetrics = false;

/** Node's own figures (memory, event loop lag, handles), once, when metrics are served. */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
}

/** Forwards everything to `target`, with `overrides` in front; new optional members pass through unchanged. */
function decorate<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value = Reflect.get(object, property, object) as unknown;
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/** Counts messages in (what the adapter hands the bridge) and out (what the bridge posts through it). */
export function meteredAdapter(adapter: ChatAdapter): ChatAdapter {
  const platform = adapter.platform;
  const countedSink = (sink: AdapterSink): AdapterSink =>
    decorate(sink, {
      receive: async (event) => {
        metrics.messagesIn.inc({ platform });
        return sink.receive(event);
      },
    });
  const stream = adapter.stream?.bind(adapter);
  return decorate(adapter, {
    start: (sink) => adapter.start(countedSink(sink)),
    post: async (message, options) => {
      const posted = await adapter.post(message, options);
      metrics.messagesOut.inc({ platform });
      return posted;
    },
    ...(stream
      ? {
          stream: (channel: string, agent: string) => {
            const post = stream(channel, agent);
            return post
              ? decorate<StreamingPost>(post, {
                  finish: async (text) => {
                    const posted = await post.finish(text);
                    metrics.messagesOut.inc({ platform });
                    return posted;
                  },
                })
              : undefined;
          },
        }
      : {}),
  });
}

/** Times every sandbox command, by outcome. */
export function meteredSandbox(sandbox: Sandbox): Sandbox {
  return decorate(sandbox, {
    exec: async (channelKey, command, options) => {
      const end = metrics.sandboxExecSeconds.startTimer();
      try {
        const result = await sandbox.exec(channelKey, command, options);
        end({ outcome: result.timedOut ? 'timeout' : result.exitCode === 0 ? 'ok' : 'nonzero' });
        return result;
      } catch (error) {
        end({ outcome: 'error' });
        throw error;
      }
    },
  });
}

/** Today's spend and each limit, read from the store when /metrics is scraped (set by the bridge). */
let spendSource:
  | (() => Promise<ReadonlyArray<{ scope: string; spentUsd: number; limitUsd: number | null }>>)
  | undefined;

export function reportSpend(source: typeof spendSource): void {
  spendSource = source;
}

new Gauge({
  name: `${PREFIX}spend_usd`,
  help: "Today's spend in US dollars, per scope (bridge, room:<key>, agent:<name>), calls under way included",
  labelNames: ['scope'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const row of (await spendSource?.()) ?? []) this.set({ scope: row.scope }, row.spentUsd);
  },
});

new Gauge({
  name: `${PREFIX}spend_limit_usd`,
  help: 'The daily spending limit in US dollars, per scope that has one',
  labelNames: ['scope'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const row of (await spendSource?.()) ?? []) {
      if (row.limitUsd !== null) this.set({ scope: row.scope }, row.limitUsd);
    }
  },
});
