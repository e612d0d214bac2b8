/**
 * The agents' model calls, as the generated conversations play them through a real bridge: every turn's first call
 * waits until a `deliver` step releases it, then goes to the fake model server through the real `openai` SDK, which
 * answers the turn's rounds from a plan made of the oracle's reply (tool calls for the actions, then the text).
 *
 * Which room a turn is for: the bridge shows an agent typing in a room, then asks for the agent's model client, in
 * one synchronous stretch at the start of each turn (AgentRunner.run); the adapter reports the typing here, so the
 * client made right after it belongs to that room.
 */
import { defaultLlmFactory, type LlmFactory } from '../../../src/bridge/index.js';
import type { AgentConfig, Config } from '../../../src/config/index.js';
import type { LlmClient, LlmRequest, LlmResponse } from '../../../src/llm/types.js';
import type { Turn } from '../../../src/room/state.js';
import { agentOfRequest, type FakeOpenAI, type FakeReply } from '../../fakes/openai-server/index.js';
import { dataOf } from '../../helpers/untrusted.js';

/** A turn's first model call, waiting for its `deliver` step. */
export interface HeldCall {
  /** The room key (`platform:channel`). */
  readonly room: string;
  readonly agent: string;
  /** The ask the room had just started when the call came (as its decision was stored). */
  readonly ask: Turn | undefined;
  /** The prompt it was built with. */
  readonly request: LlmRequest;
  /** Whether the room asked to stop the turn meanwhile (an operator, a deadline, a shutdown). */
  readonly stopped: boolean;
}

interface Waiting extends HeldCall {
  readonly resume: (go: boolean) => void;
}

/** What the model answers in each round of the turn being delivered. */
export interface Plan {
  readonly agent: string;
  readonly rounds: readonly FakeReply[];
}

/** A messaging action's result, as the model read it back (`posted`, `refused`, `private-room`, `failed`). */
export type ActionSeen = 'posted' | 'refused' | 'private-room' | 'failed';

/** The tool-call ids of actions start with this (other tool calls fill rounds). */
export const ACTION_CALL = 'act';

export class ModelCalls {
  private readonly held = new Map<string, Waiting>();
  private typed: { room: string; agent: string } | undefined;
  private plan: { readonly plan: Plan; round: number } | undefined;
  /** Every turn's first call, in the order they came (the caller drains it after each step). */
  readonly started: HeldCall[] = [];
  /** Results of actions the delivered turn took, as the model server received them. */
  readonly actions: ActionSeen[] = [];
  /** What the fake model server was asked that no plan covered (a bug in the shell or in this harness). */
  readonly unexpected: string[] = [];

  constructor(
    server: FakeOpenAI,
    /** The turn a room started last, as the store took it. */
    private readonly startedIn: (room: string) => Turn | undefined,
  ) {
    server.respond((request) => this.answer(request));
  }

  /** The adapter shows `agent` typing in `room`: the model client asked for next is that turn's. */
  typing(room: string, agent: string): void {
    this.typed = { room, agent };
  }

  /** The bridge's LlmFactory: one client per turn, bound to the turn's room; its first call waits. */
  factory(config: Config): LlmFactory {
    const real = defaultLlmFactory(config);
    return (agent: AgentConfig): LlmClient => {
      const typed = this.typed;
      this.typed = undefined;
      if (!typed || typed.agent !== agent.name) {
        this.unexpected.push(`a model client for @${agent.name} with no room (typing: ${JSON.stringify(typed)})`);
      }
      const room = typed?.room ?? '?';
      let first = true;
      return {
        complete: async (request: LlmRequest): Promise<LlmResponse> => {
          if (first) {
            first = false;
            if (!(await this.hold(room, agent.name, request))) throw new Error('the bridge stopped');
            request.signal?.throwIfAborted();
          }
          return real(agent).complete(request);
        },
      };
    };
  }

  /** The held call of a room's turn, if one waits. */
  waiting(room: string): HeldCall | undefined {
    return this.held.get(room);
  }

  /** Every held call. */
  all(): HeldCall[] {
    return [...this.held.values()];
  }

  /** Releases a room's held call: its turn goes on with `plan` (ignored when the turn was stopped meanwhile). */
  release(room: string, plan: Plan | undefined): void {
    const call = this.held.get(room);
    if (!call) return;
    this.held.delete(room);
    this.plan = plan ? { plan, round: 0 } : undefined;
    call.resume(true);
  }

  /** The bridge stopped: its held calls end without an answer (a restarted bridge takes the turns again). */
  dropAll(): void {
    const calls = [...this.held.values()];
    this.held.clear();
    for (const call of calls) call.resume(false);
  }

  private hold(room: string, agent: string, request: LlmRequest): Promise<boolean> {
    if (this.held.has(room)) this.unexpected.push(`two turns wait in ${room} at once`);
    return new Promise<boolean>((resume) => {
      const call: Waiting = {
        room,
        agent,
        ask: this.startedIn(room),
        request,
        get stopped() {
          return request.signal?.aborted === true;
        },
        resume,
      };
      this.held.set(room, call);
      this.started.push(call);
    });
  }

  /** The fake model server's answer: the next round of the plan of the turn being delivered. */
  private answer(request: { messages: Array<{ role: string; content?: unknown; tool_call_id?: string }> }): FakeReply {
    const agent = agentOfRequest(request);
    const current = this.plan;
    const reply = current?.plan.agent === agent ? current.plan.rounds[current.round] : undefined;
    if (!current || !reply) {
      this.unexpected.push(`a model call for @${agent} that no delivered turn plans (round ${current?.round ?? '-'})`);
      return { content: '[pass]' };
    }
    // The results of the previous round's actions come back with this call.
    if (current.round > 0) {
      const previous = current.plan.rounds[current.round - 1]?.toolCalls ?? [];
      const results = request.messages.filter((m) => m.role === 'tool');
      for (const call of previous) {
        if (!call.id?.startsWith(ACTION_CALL)) continue;
        const result = results.find((m) => m.tool_call_id === call.id);
        this.actions.push(actionSeen(result ? dataOf(result.content) : ''));
      }
    }
    current.round += 1;
    return reply;
  }
}

/** A messaging tool's answer read back into how the room took the action. */
function actionSeen(text: string): ActionSeen {
  if (text.startsWith('[ERROR: the humans have control')) return 'refused';
  if (/^\[ERROR: .* is a private room/.test(text)) return 'private-room';
  if (text.startsWith('[ERROR:')) return 'failed';
  return 'posted';
}

/** The situation frame of a turn's prompt, read back from its words (as script.ts `frameOf` names it). */
export function frameIn(request: LlmRequest): string {
  const note = [...request.messages].reverse().find((m) => m.role === 'user');
  const text = typeof note?.content === 'string' ? note.content : '';
  const at = text.indexOf('>>> SITUATION <<<\n');
  const situation = at < 0 ? '' : text.slice(at + '>>> SITUATION <<<\n'.length);
  const names = (list: string) => (list ? list.split(/, | and /).map((n) => n.replace(/^@/, '')) : []);
  // Nobody may be named: an ask for a request cancelled meanwhile has no requester left.
  let m = /^(.*?) ?asked for your action/.exec(situation);
  if (m) return `requested by ${names(m[1] ?? '').join(',')}`;
  m = /^@(\S+) answered the question you asked them/.exec(situation);
  if (m) return `answered by ${m[1]}`;
  m = /^This is a private conversation between you and @(\S+);/.exec(situation);
  if (m) return `direct with ${m[1]}`;
  if (situation.includes('you were not asked directly')) return 'observe';
  if (/asks you for a private chat/.test(situation)) return 'chat-request';
  if (/request #\d+ (has answered|reached its deadline|is settled)/.test(situation)) return 'resume';
  return `unknown: ${situation.slice(0, 80)}`;
}
