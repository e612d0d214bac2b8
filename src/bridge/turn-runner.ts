import type { AgentConfig } from '../config/index.js';
import { renderSituation, type Situation } from '../llm/situation.js';
import type { Logger } from '../log.js';
import type { StreamingPost } from '../ports.js';
import { visibleTo } from '../room/privacy.js';
import type { ReplyTo, ToolRun } from '../room/types.js';
import type { Messaging } from '../tools/tool.js';
import type { AgentRunner } from './agent-runner.js';
import type { Room } from './rooms.js';
import { StreamPreview } from './stream-preview.js';

/** How one agent's turn ended, before anything is posted. */
export type TurnResult = { readonly stream?: StreamingPost | undefined } & (
  | { readonly kind: 'reply'; readonly text: string; readonly toolRuns: readonly ToolRun[] }
  | { readonly kind: 'round-limit'; readonly text: string; readonly toolRuns: readonly ToolRun[] }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'failed'; readonly error: unknown }
);

/**
 * The turn runner: one agent's turn in one room — the context it may see, the tool loop, the streamed
 * preview — ending in a TurnResult. It posts nothing; the conductor decides what the result means.
 */
export class TurnRunner {
  /** Which requests a running turn answers, so a deadline stops only those turns. */
  private readonly threadTurns = new WeakMap<AbortController, readonly number[]>();

  constructor(
    private readonly deps: {
      readonly runner: AgentRunner;
      /** The messaging actions of `agent` in `room` for this turn. */
      readonly messagingFor: (room: Room, agent: AgentConfig, replyTo: ReplyTo) => Messaging;
      /** Lines the agent reads at the start of a turn (its pending chat requests, how its requests ended). */
      readonly notes: (agent: AgentConfig) => string;
      readonly log: Logger;
    },
  ) {}

  async run(room: Room, agent: AgentConfig, situation: Situation, replyTo: ReplyTo): Promise<TurnResult> {
    const controller = new AbortController();
    room.actor.inFlight.set(agent.name, controller);
    if (replyTo.threads.length > 0) this.threadTurns.set(controller, replyTo.threads);
    const preview = new StreamPreview(room.adapter, room.state.row.channel, agent.name);
    const started = Date.now();
    try {
      const output = await this.deps.runner.run(room.adapter, {
        agent,
        channel: room.state.row.channel,
        channelKey: room.key,
        history: visibleTo(agent.name, room.state.history()),
        situation: [renderSituation(situation, agent.prompts), this.deps.notes(agent)].filter(Boolean).join('\n\n'),
        signal: controller.signal,
        messaging: this.deps.messagingFor(room, agent, replyTo),
        onText: preview.enabled ? (text) => preview.show(text) : undefined,
        log: this.deps.log,
      });
      const stream = preview.post;
      if (output.roundLimitHit) return { kind: 'round-limit', text: output.text, toolRuns: output.toolRuns, stream };
      return { kind: 'reply', text: output.text, toolRuns: output.toolRuns, stream };
    } catch (error) {
      if (controller.signal.aborted) {
        this.deps.log.info({ room: room.key, agent: agent.name }, 'turn stopped');
        return { kind: 'aborted', stream: preview.post };
      }
      this.deps.log.debug({ room: room.key, agent: agent.name, ms: Date.now() - started, err: error }, 'turn failed');
      return { kind: 'failed', error, stream: preview.post };
    } finally {
      room.actor.inFlight.delete(agent.name);
    }
  }

  /** Stops the turns in `room` working on `threadId` for these agents (its deadline passed). */
  stopThreadTurns(room: Room, threadId: number, agents: readonly string[]): void {
    for (const name of agents) {
      const turn = room.actor.inFlight.get(name);
      if (turn && this.threadTurns.get(turn)?.includes(threadId))
        turn.abort(new Error('the request reached its deadline'));
    }
  }
}
