/**
 * Runs the turns a room asks for (the `ask` effect): one agent's turn — the context it may see, the tool loop with its
 * journal, the typing indicator, the streamed preview — and reports how it ended to the room as an `answer` event. It
 * posts nothing: the room decides what the reply means.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentConfig, Config } from '../../config/index.js';
import { describeError, StoreError } from '../../errors.js';
import { runAgentTurn } from '../../llm/agent-turn.js';
import { stripSpeakerPrefix } from '../../llm/context.js';
import type { LlmFactory } from '../../llm/llm-factory.js';
import { renderSituation } from '../../llm/situation.js';
import { type TurnServices, turnContext } from '../../llm/turn-context.js';
import type { Logger } from '../../log.js';
import type { McpPool } from '../../mcp/pool.js';
import { metrics } from '../../metrics.js';
import type { Sandbox } from '../../ports.js';
import { rootOf } from '../../room/approvals.js';
import type { TurnOrder } from '../../room/effects.js';
import type { TurnOutcome } from '../../room/events.js';
import { visibleTo } from '../../room/privacy.js';
import { resumeNote } from '../../room/recovery.js';
import { redact } from '../../secrets.js';
import { SpendLimitError, type SpendMeter, SpendNotApproved } from '../../spend/meter.js';
import { reachedLimit } from '../../spend/reached.js';
import type { RoomStore, ToolJournal } from '../../store/port.js';
import { toolsFor } from '../../tools/registry.js';
import { type TurnTrace, traceTurn } from '../../trace/turn.js';
import type { RoomHandle } from '../loop/room-handle.js';
import type { Approvals } from './approvals.js';
import { type MessagingDeps, RoomMessaging } from './messaging.js';
import type { Previews } from './previews.js';
import type { PrivateChats } from './private-chats.js';
import type { StreamPreview } from './stream-preview.js';
import { journaledTools } from './tool-journal.js';

/** A turn under way. */
interface Running {
  readonly agent: string;
  readonly controller: AbortController;
  readonly preview: StreamPreview;
  /** How many times a store failing for a moment cut this turn (it is taken again, with its journal). */
  storeRetries: number;
}

/** A turn cut by a store that failed for a moment is taken again this many times, a little later each time. */
const STORE_RETRIES = 3;
const STORE_RETRY_MS = 1000;
/** Node's codes for a connection lost or refused (a database restarting, a proxy resetting). */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT']);

/** A failure of the store that may pass (a dropped connection): the turn is worth taking again, not failing. */
function storeHiccup(error: unknown): boolean {
  if (error instanceof StoreError) return error.retryable;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_CODES.has(code);
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export interface TurnsDeps {
  readonly config: Config;
  /** Each agent's model client. */
  readonly llm: LlmFactory;
  readonly sandbox: Sandbox;
  /** Memory, retrieval and usage bookkeeping (absent: none). */
  readonly services?: TurnServices | undefined;
  readonly rooms: Pick<RoomStore, 'history'>;
  readonly journal: ToolJournal;
  /** How many of a room's newest messages a turn is given (the context builder keeps what fits). */
  readonly window: number;
  /** What the messaging actions of an agent's turn reach (other rooms, private chats, other bridges). */
  readonly messaging: MessagingDeps;
  /** Lines the agent reads at the start of a turn (its pending chat requests, how its requests ended). */
  readonly chats: Pick<PrivateChats, 'briefing'>;
  /** Spending limits on the turns' calls (none: not held). */
  readonly spend?: Pick<SpendMeter, 'forCall' | 'forTool'> | undefined;
  /** Where a turn's reply is shown while it is written. */
  readonly previews: Previews;
  /** Tool calls waiting for a person's approval (rule 17). */
  readonly approvals?: Approvals | undefined;
  /** The agents' MCP servers in each room: their tools join the agent's own (absent: none). */
  readonly mcp?: Pick<McpPool, 'toolsFor'> | undefined;
  readonly clock: () => number;
  readonly log: Logger;
}

/** The typing indicator is sent again this often while a turn runs. */
const TYPING_EVERY_MS = 8000;

export class Turns {
  private readonly running = new Map<string, Running>();
  private stopped = false;

  constructor(private readonly deps: TurnsDeps) {}

  /** Starts one agent's turn; its outcome goes to the room as an `answer`. */
  start(room: RoomHandle, order: TurnOrder): void {
    const agent = this.deps.config.agents.find((a) => same(a.name, order.ask.agent));
    const key = `${room.key}#${order.ask.id}`;
    if (!agent) {
      void room.report({ type: 'answer', ask: order.ask.id, outcome: { kind: 'failed', reason: 'no such agent' } });
      return;
    }
    const running: Running = {
      agent: agent.name,
      controller: new AbortController(),
      preview: this.deps.previews.open(room.key, order.ask.id, room.adapter, room.channel, agent.name),
      storeRetries: 0,
    };
    this.running.set(key, running);
    metrics.agentTurns.inc({ agent: agent.name });
    void traceTurn(room.key, order, agent, (traced) => this.run(room, order, agent, running, traced)).then(
      (outcome) => {
        if (this.running.get(key) === running) this.running.delete(key);
        // A shutdown cuts the turn: it is taken again after the restart, not reported now.
        if (this.stopped) return;
        void room.report({ type: 'answer', ask: order.ask.id, outcome });
      },
    );
  }

  private async run(
    room: RoomHandle,
    order: TurnOrder,
    agent: AgentConfig,
    running: Running,
    traced: TurnTrace | undefined,
  ): Promise<TurnOutcome> {
    const { deps } = this;
    const { ask } = order;
    const started = Date.now();
    const typing = this.typing(room, agent.name);
    try {
      const history = visibleTo(agent.name, await deps.rooms.history(room.id, deps.window));
      const earlier = order.again ? await deps.journal.runs(room.key, ask.id) : [];
      const situation = [
        renderSituation(order.situation, agent.prompts),
        await deps.chats.briefing(agent),
        order.again
          ? resumeNote(earlier.map((r) => ({ tool: r.tool, input: r.input || r.args, status: r.status })))
          : undefined,
      ]
        .filter(Boolean)
        .join('\n\n');
      const { preview } = running;
      const show = (text: string) => preview.show(text);
      const place = { room: room.key, audience: ask.audience };
      const mcpTools = (await deps.mcp?.toolsFor(room.key, agent)) ?? [];
      const journaled = journaledTools(
        [...toolsFor(agent.tools), ...mcpTools],
        deps.journal,
        { room: room.key, ask: ask.id },
        earlier,
        deps.clock,
      );
      const where = { room, ask: ask.id, agent: agent.name, root: rootOf(ask) };
      const rules = deps.approvals?.rulesOf(agent);
      const tools = deps.approvals ? deps.approvals.wrap(journaled, rules, where) : journaled;
      const atLimit = deps.config.settings.SPEND_AT_LIMIT === 'ask';
      const gate = deps.approvals?.spendGate(rules, where, atLimit, agent.model);
      const { settings } = deps.config;
      const output = await runAgentTurn({
        client: deps.llm(agent),
        model: agent.model,
        temperature: agent.temperature,
        ...(await turnContext({
          agent,
          agentNames: deps.config.agents.map((a) => a.name),
          place,
          roomId: room.id,
          history,
          situation,
          tools,
          settings,
          sources: deps.services,
        })),
        tools,
        toolContext: {
          agent: agent.name,
          channelKey: room.key,
          sandbox: deps.sandbox,
          commandTimeoutMs: settings.SANDBOX_TIMEOUT_S * 1000,
          signal: running.controller.signal,
          messaging: new RoomMessaging(deps.messaging, room, order, agent),
          memory: deps.services?.memoryFor?.(agent.name, place),
          spend: deps.spend?.forTool(agent.name, room.key),
        },
        maxRounds: settings.MAX_TOOL_ROUNDS,
        onToolRun: (run) => {
          room.adapter.toolRun?.(room.channel, agent.name, run.input, run.output, run.tool);
          deps.services?.recordAction?.(agent.name, place, run);
        },
        onUsage: (usage) => {
          traced?.usage(usage);
          deps.services?.recordUsage?.(agent.name, room.key, usage);
        },
        onText: preview.enabled ? (traced?.text(show) ?? show) : undefined,
        // The turn's lines lead to its trace (the ids are bound here: no asynchronous context carries them).
        log: traced ? deps.log.child(traced.logFields) : deps.log,
        trace: traced?.context,
        maxOutputTokens: agent.maxOutputTokens,
        meter: deps.spend?.forCall(agent, room.key, gate),
      });
      return {
        kind: 'reply',
        text: stripSpeakerPrefix(agent.name, output.text),
        toolRuns: output.toolRuns,
        ...(output.roundLimitHit ? { roundLimit: true } : {}),
      };
    } catch (error) {
      if (running.controller.signal.aborted) {
        deps.log.info({ room: room.key, agent: agent.name }, 'turn stopped');
        return { kind: 'stopped' };
      }
      if (error instanceof SpendNotApproved) return { kind: 'failed', reason: error.message };
      if (error instanceof SpendLimitError) {
        deps.log.info({ room: room.key, agent: agent.name, limit: error.reached }, 'turn stopped by a spending limit');
        return { kind: 'over-limit', limit: reachedLimit(error.reached, deps.config.settings.SPEND_TZ ?? 'UTC') };
      }
      if (storeHiccup(error) && running.storeRetries < STORE_RETRIES && !this.stopped) {
        running.storeRetries += 1;
        deps.log.warn({ err: error, room: room.key, agent: agent.name }, 'a turn was cut by the store; taken again');
        const wait = STORE_RETRY_MS * running.storeRetries;
        const waited = await sleep(wait, true, { signal: running.controller.signal }).catch(() => false);
        if (!waited) return { kind: 'stopped' };
        return this.run(room, { ...order, again: true }, agent, running, traced);
      }
      deps.log.error({ err: error, room: room.key, agent: agent.name, ms: Date.now() - started }, 'agent turn failed');
      return { kind: 'failed', reason: redact(describeError(error)) };
    } finally {
      clearInterval(typing);
    }
  }

  /** Shows that the agent is typing, now and every few seconds until the turn ends. */
  private typing(room: RoomHandle, agent: string): NodeJS.Timeout {
    const show = () => void room.adapter.typing?.(room.channel, agent)?.catch(() => {});
    show();
    const timer = setInterval(show, TYPING_EVERY_MS);
    timer.unref();
    return timer;
  }

  /** Stops a turn under way (an operator, a deadline). */
  stop(room: string, ask: number, reason: string): void {
    this.running.get(`${room}#${ask}`)?.controller.abort(new Error(reason));
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
