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
  sandboxExecSeconds: new Histogram({
    name: `${PREFIX}sandbox_exec_seconds`,
    help: 'Duration of a sandbox command, per outcome (ok, exit code not 0, timeout, error)',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
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
