/**
 * Runs the turns a room asks for (the `ask` effect): one agent's turn — the context it may see, the tool loop with
 * its journal, the streamed preview — and reports how it ended to the room as an `answer` event. It posts nothing:
 * the room decides what the reply means.
 */
import type { AgentConfig } from '../config/index.js';
import { describeError } from '../errors.js';
import { renderSituation } from '../llm/situation.js';
import type { CallMeter } from '../llm/types.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';
import type { StreamingPost } from '../ports.js';
import type { TurnOrder } from '../room/effects.js';
import type { TurnOutcome } from '../room/events.js';
import { visibleTo } from '../room/privacy.js';
import { resumeNote } from '../room/recovery.js';
import { redact } from '../secrets.js';
import { SpendLimitError } from '../spend/meter.js';
import { reachedLimit } from '../spend/reached.js';
import type { RoomStore, ToolJournal } from '../store/port.js';
import type { Messaging } from '../tools/tool.js';
import type { AgentRunner } from './agent-runner.js';
import type { RoomActor } from './room-actor.js';
import { StreamPreview } from './stream-preview.js';
import { journaledTools } from './tool-journal.js';

/** A turn under way. */
interface Running {
  readonly agent: string;
  readonly controller: AbortController;
  readonly preview: StreamPreview;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export interface TurnsDeps {
  readonly agents: readonly AgentConfig[];
  readonly runner: AgentRunner;
  readonly rooms: Pick<RoomStore, 'history'>;
  readonly journal: ToolJournal;
  /** How many of a room's newest messages a turn is given (the context builder keeps what fits). */
  readonly window: number;
  /** The messaging actions of an agent's turn. */
  readonly messaging: (actor: RoomActor, order: TurnOrder, agent: AgentConfig) => Messaging;
  /** Lines the agent reads at the start of a turn (its pending chat requests, how its requests ended). */
  readonly notes: (agent: AgentConfig) => Promise<string>;
  /** Spending limits: the meter of an agent's calls in a room (none: not held). */
  readonly meter?: ((agent: AgentConfig, room: string) => CallMeter | undefined) | undefined;
  /** SPEND_TZ, for when a limit lifts. */
  readonly timeZone?: string | undefined;
  readonly clock: () => number;
  readonly log: Logger;
}

export class Turns {
  private readonly running = new Map<string, Running>();
  private stopped = false;

  constructor(private readonly deps: TurnsDeps) {}

  /** Starts one agent's turn; its outcome goes to the room as an `answer`. */
  start(actor: RoomActor, order: TurnOrder): void {
    const agent = this.deps.agents.find((a) => same(a.name, order.ask.agent));
    const key = `${actor.key}#${order.ask.id}`;
    if (!agent) {
      void actor.deliver({ type: 'answer', ask: order.ask.id, outcome: { kind: 'failed', reason: 'no such agent' } });
      return;
    }
    const running: Running = {
      agent: agent.name,
      controller: new AbortController(),
      preview: new StreamPreview(actor.adapter, actor.record.channel, agent.name),
    };
    this.running.set(key, running);
    metrics.agentTurns.inc({ agent: agent.name });
    void this.run(actor, order, agent, running).then((outcome) => {
      // A shutdown cuts the turn: it is taken again after the restart, not reported now.
      if (this.stopped) return;
      void actor.deliver({ type: 'answer', ask: order.ask.id, outcome }, { urgent: true });
    });
  }

  private async run(actor: RoomActor, order: TurnOrder, agent: AgentConfig, running: Running): Promise<TurnOutcome> {
    const { deps } = this;
    const { ask } = order;
    const started = Date.now();
    try {
      const history = visibleTo(agent.name, await deps.rooms.history(actor.record.id, deps.window));
      const earlier = order.again ? await deps.journal.runs(actor.key, ask.id) : [];
      const situation = [
        renderSituation(order.situation, agent.prompts),
        await deps.notes(agent),
        order.again
          ? resumeNote(earlier.map((r) => ({ tool: r.tool, input: r.input || r.args, status: r.status })))
          : undefined,
      ]
        .filter(Boolean)
        .join('\n\n');
      const preview = running.preview;
      const output = await deps.runner.run(actor.adapter, {
        agent,
        channel: actor.record.channel,
        channelKey: actor.key,
        place: { room: actor.key, audience: ask.audience },
        roomId: actor.record.id,
        history,
        situation,
        signal: running.controller.signal,
        messaging: deps.messaging(actor, order, agent),
        onText: preview.enabled ? (text) => preview.show(text) : undefined,
        log: deps.log,
        wrapTools: (tools) =>
          journaledTools(tools, deps.journal, { room: actor.key, ask: ask.id }, earlier, deps.clock),
        meter: deps.meter?.(agent, actor.key),
      });
      return {
        kind: 'reply',
        text: output.text,
        toolRuns: output.toolRuns,
        ...(output.roundLimitHit ? { roundLimit: true } : {}),
      };
    } catch (error) {
      if (running.controller.signal.aborted) {
        deps.log.info({ room: actor.key, agent: agent.name }, 'turn stopped');
        return { kind: 'stopped' };
      }
      if (error instanceof SpendLimitError) {
        deps.log.info({ room: actor.key, agent: agent.name, limit: error.reached }, 'turn stopped by a spending limit');
        return { kind: 'over-limit', limit: reachedLimit(error.reached, deps.timeZone ?? 'UTC') };
      }
      deps.log.error({ err: error, room: actor.key, agent: agent.name, ms: Date.now() - started }, 'agent turn failed');
      return { kind: 'failed', reason: redact(describeError(error)) };
    }
  }

  /** Stops a turn under way (an operator, a deadline). */
  stop(room: string, ask: number, reason: string): void {
    this.running.get(`${room}#${ask}`)?.controller.abort(new Error(reason));
  }

  /** The turn's reply will not be posted: whatever preview was shown goes. */
  discard(room: string, ask: number): void {
    const key = `${room}#${ask}`;
    const running = this.running.get(key);
    this.running.delete(key);
    void running?.preview.post?.cancel().catch(() => {});
  }

  /** The turn's shown preview, for its reply to finish (taken once). */
  preview(room: string, ask: number): StreamingPost | undefined {
    const key = `${room}#${ask}`;
    const running = this.running.get(key);
    this.running.delete(key);
    return running?.preview.post;
  }

  /** The agents with a turn under way in a room (/status). */
  working(room: string): string[] {
    const prefix = `${room}#`;
    return [...this.running.entries()].filter(([key]) => key.startsWith(prefix)).map(([, r]) => r.agent);
  }

  /** Shutdown: every turn is cut (taken again after the restart). */
  stopAll(): void {
    this.stopped = true;
    for (const running of this.running.values()) running.controller.abort(new Error('the bridge is stopping'));
  }
}
