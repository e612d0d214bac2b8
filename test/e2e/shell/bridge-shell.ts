/**
 * A real bridge (createBridge, a real SQLite store, the fake model server through the `openai` SDK) driven through
 * the script language of test/model, on one platform (the subclasses: Discord, the terminal room). Each step is
 * carried out on the platform; the bridge then runs until it is quiet — every turn it started waits in its model
 * call, nothing is being decided, posted or taken in — and the step's observations are read from what the platform
 * received, what the model was asked, what the store took and what the log said.
 */
import type { Bridge, Deadline, Scheduler } from '../../../src/bridge/index.js';
import { createBridge } from '../../../src/bridge/index.js';
import type { Config, ToolName } from '../../../src/config/index.js';
import type { ChatAdapter } from '../../../src/ports.js';
import { openStore } from '../../../src/store/index.js';
import { FakeSandbox } from '../../fakes/fake-sandbox.js';
import type { FakeOpenAI, FakeReply, FakeToolCall } from '../../fakes/openai-server/index.js';
import { type TestAgent, testConfig } from '../../helpers/config.js';
import type { Observed, Oracle, Reply, ReplyAction, Step, System, World } from '../../model/script.js';
import { ACTION_CALL, frameIn, ModelCalls, type Plan } from './model-calls.js';
import { LogTap, StoreTap } from './records.js';

/** The time the bridge, the platform and the deadlines share: moved by the steps, never by the process. */
export interface SharedClock {
  now: number;
}

/** The oracle's replies, which a shell may rewrite before a step into what its platform can carry. */
export type MutableOracle = Record<string, Reply[]>;

/** What the bridge says of a failed model call: the fake model answers 500 with the oracle's reason. */
const FAILED = 'the model endpoint answered 500: ';
/** What it says of an answer with neither text nor tool call. */
const NO_TEXT = "the model's reply had no text";

/** How long a step may take to settle before the conversation fails (the machine is busy: generous). */
const SETTLE_LIMIT_MS = 30_000;

export abstract class BridgeShell implements System {
  protected readonly store: StoreTap;
  protected readonly log = new LogTap();
  protected readonly calls: ModelCalls;
  protected bridge: Bridge | undefined;
  private readonly sqlite = openStore(':memory:');
  private readonly sandbox = new FakeSandbox();
  private readonly used = new Map<string, number>();
  private readonly deadlines: Array<Deadline & { fire: () => void; live: boolean }> = [];
  private config: Config | undefined;
  /** What the platform carried in this conversation (beside the model's own coverage). */
  readonly coverage = new Set<string>();

  constructor(
    protected readonly world: World,
    protected readonly oracle: MutableOracle,
    protected readonly clock: SharedClock,
    private readonly model: FakeOpenAI,
  ) {
    this.store = new StoreTap(this.sqlite);
    this.calls = new ModelCalls(model, (room) => this.store.startedIn(room));
  }

  /** The platform room key (`platform:channel`) of a script room (MAIN, SIDE, a DM). */
  protected abstract roomKey(room: string): string;
  /** The script room of a platform room key. */
  protected abstract scriptRoom(key: string): string;
  /** The platform's adapters for a new bridge. */
  protected abstract adapters(): ChatAdapter[];
  /** The platform's settings and each agent's identity on it. */
  protected abstract platformConfig(): { env: Record<string, string>; agent: (name: string) => Partial<TestAgent> };
  /** A step the shell itself does not carry: a human speaking, an edit, a command, a refusal, a catch-up. */
  protected abstract platformStep(step: Step): Promise<void>;
  /** Rewrites a step into one the platform can carry (undefined: it cannot carry it at all). */
  protected abstract carry(step: Step): Promise<Step | undefined>;
  /** Whether an action of a reply reaches the platform as a tool call (from a turn in `room`). */
  protected abstract reaches(action: ReplyAction, room: string, agent: string): Promise<boolean>;
  /** The tool call that carries an action from a turn in `room`. */
  protected abstract toolCall(action: ReplyAction, room: string, id: string): FakeToolCall;
  /** Why the platform side is not quiet yet (undefined: it is). */
  protected abstract platformBusy(): string | undefined;
  /** What reached the platform since the last call: posts and the bridge's lines. */
  protected abstract takePosts(): Observed[];
  /** Called once the bridge has started (a restart included). */
  protected async started(): Promise<void> {}

  /** Starts the first bridge. */
  async open(): Promise<void> {
    await this.startBridge();
    await this.settle();
    this.collect();
  }

  async close(): Promise<void> {
    await this.bridge?.stop();
    this.calls.dropAll();
    await this.sqlite.close();
  }

  /** What went wrong inside the bridge lately (for a failure's report). */
  errors(): readonly string[] {
    return [...this.log.errors, ...this.calls.unexpected];
  }

  /**
   * The step as this platform carries it (undefined: not at all). A delivery's reply is rewritten in the oracle,
   * which the model shares, into what the bridge will make of it: actions the platform cannot take are left out; a
   * reply left with neither text nor action is the failure the model client reads an empty answer as; a failure is
   * said in the words the model client uses for the error the fake model sends.
   */
  async prepare(step: Step): Promise<Step | undefined> {
    if (step.kind !== 'deliver') return this.carry(step);
    const call = this.calls.waiting(this.roomKey(step.room));
    if (!call || call.stopped) return step;
    const n = this.used.get(call.agent) ?? 0;
    const replies = this.oracle[call.agent];
    const reply = replies?.[n];
    if (!replies || !reply) return step;
    if (reply.kind === 'fail') {
      if (reply.reason !== NO_TEXT && !reply.reason.startsWith(FAILED))
        replies[n] = { ...reply, reason: `${FAILED}${reply.reason}` };
      return step;
    }
    const actions: ReplyAction[] = [];
    for (const action of reply.actions ?? [])
      if (await this.reaches(action, step.room, call.agent)) actions.push(action);
    const { actions: _, ...rest } = reply;
    replies[n] =
      !reply.roundLimit && actions.length === 0 && reply.text.trim() === ''
        ? { kind: 'fail', reason: NO_TEXT }
        : { ...rest, ...(actions.length > 0 ? { actions } : {}) };
    return step;
  }

  async step(step: Step): Promise<Observed[]> {
    this.clock.now += 1000;
    switch (step.kind) {
      case 'deliver':
        this.deliver(step.room);
        break;
      case 'deadline':
        await this.deadline();
        break;
      case 'restart':
        await this.bridge?.stop();
        this.calls.dropAll();
        await this.startBridge();
        break;
      default:
        await this.platformStep(step);
    }
    await this.settle();
    return this.collect();
  }

  /** The bridge's configuration, made from the world and the platform's settings. */
  protected configOf(): Config {
    const { env, agent } = this.platformConfig();
    const acting: ToolName[] = ['send_channel_message', 'send_dm', 'look'];
    this.config ??= testConfig({
      agents: this.world.agents.map((a) => ({
        name: a.name,
        activation: a.activation,
        // `look` fills the rounds of a turn that runs out of them; actions need the messaging tools.
        tools: a.actions ? acting : ['look'],
        ...agent(a.name),
      })),
      env: {
        LLM_MAX_RETRIES: '0',
        LLM_TIMEOUT_S: '600',
        TURN_LIMIT: String(this.world.turnLimit),
        PRIVACY: this.world.privacy,
        REPLY_TIMEOUT_S: String(this.world.timeoutMs / 1000),
        EDIT_WAKE_MINUTES: String(this.world.editWindowMs / 60_000),
        MAX_TOOL_ROUNDS: String(this.world.maxToolRounds),
        OPENAI_BASE_URL: this.model.baseURL,
        ...env,
      },
    });
    return this.config;
  }

  private async startBridge(): Promise<void> {
    const config = this.configOf();
    const scheduler: Scheduler = (deadline, fire) => {
      const entry = { ...deadline, fire, live: true };
      this.deadlines.push(entry);
      return () => {
        entry.live = false;
      };
    };
    this.bridge = createBridge({
      config,
      store: this.store.store,
      sandbox: this.sandbox,
      adapters: this.adapters(),
      logger: this.log.logger,
      llm: this.calls.factory(config),
      clock: () => this.clock.now,
      scheduler,
    });
    await this.bridge.start();
    await this.started();
  }

  /** Releases the turn waiting in the room with the plan of the agent's next reply (a stopped turn just ends). */
  private deliver(room: string): void {
    const key = this.roomKey(room);
    const call = this.calls.waiting(key);
    if (!call) return;
    if (call.stopped) {
      this.coverage.add('a stopped turn that ended at its delivery');
      this.calls.release(key, undefined);
      return;
    }
    const n = this.used.get(call.agent) ?? 0;
    this.used.set(call.agent, n + 1);
    const reply: Reply = this.oracle[call.agent]?.[n] ?? { kind: 'text', text: '[pass]' };
    if (reply.kind === 'fail')
      this.coverage.add(reply.reason === NO_TEXT ? 'an answer with no text' : 'a failed model call');
    if (reply.kind === 'text' && reply.roundLimit) this.coverage.add('a turn out of tool rounds');
    for (const action of reply.kind === 'text' ? (reply.actions ?? []) : []) {
      if (action.kind === 'dm') this.coverage.add('a DM by an action');
      else this.coverage.add(action.room === 'here' ? 'an action here' : 'an action in the other channel');
      if (action.kind === 'dm' ? action.requestReply : action.requestReply.length > 0) {
        this.coverage.add('an action awaiting replies');
      }
    }
    this.calls.release(key, this.plan(call.agent, reply, room));
  }

  /** The model's answers, round by round, that make the bridge see `reply`. */
  private plan(agent: string, reply: Reply, room: string): Plan {
    if (reply.kind === 'fail') {
      if (reply.reason === NO_TEXT) return { agent, rounds: [{ content: '' }] };
      return { agent, rounds: [{ status: 500, errorMessage: reply.reason.replace(FAILED, '') }] };
    }
    if (reply.roundLimit) {
      const look = (i: number): FakeToolCall => ({ id: `look-${i}`, name: 'look', arguments: {} });
      const rounds: FakeReply[] = [];
      for (let i = 0; i < this.world.maxToolRounds; i++) rounds.push({ content: '', toolCalls: [look(i)] });
      rounds.push({ content: reply.text, toolCalls: [look(this.world.maxToolRounds)] });
      return { agent, rounds };
    }
    const actions = reply.actions ?? [];
    if (actions.length === 0) return { agent, rounds: [{ content: reply.text }] };
    const toolCalls = actions.map((action, i) => this.toolCall(action, room, `${ACTION_CALL}-${i}`));
    return { agent, rounds: [{ content: '', toolCalls }, { content: reply.text }] };
  }

  /** The earliest deadline of a request still open falls due: the clock moves to it and it fires. */
  private async deadline(): Promise<void> {
    const open = new Set((await this.store.store.rooms.requests()).filter((r) => r.status === 'open').map((r) => r.id));
    const due = this.deadlines
      .filter((d) => d.live && open.has(d.request))
      .sort((a, b) => a.at - b.at || a.request - b.request)[0];
    if (!due) return;
    due.live = false;
    this.clock.now = Math.max(this.clock.now, due.at);
    due.fire();
  }

  /**
   * Waits until the bridge is quiet (see the header); fails the conversation when it never is. What the bridge does
   * without a socket in between (a decision, a note to another room) runs within one turn of the event loop: quiet
   * twice across such a turn, with no decision taken in between, is quiet.
   */
  private async settle(): Promise<void> {
    const limit = Date.now() + SETTLE_LIMIT_MS;
    for (;;) {
      if (this.calls.unexpected.length > 0) throw new Error(this.calls.unexpected.join('\n'));
      const commits = this.store.commits;
      const busy = await this.busy();
      if (busy === undefined) {
        await new Promise((resolve) => setImmediate(resolve));
        if (commits === this.store.commits && (await this.busy()) === undefined) return;
        continue;
      }
      if (Date.now() > limit) throw new Error(`the bridge did not settle within ${SETTLE_LIMIT_MS} ms: ${busy}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /** Why the bridge is not quiet (undefined: it is). */
  private async busy(): Promise<string | undefined> {
    if (this.store.inFlight > 0) return 'a decision is being stored';
    const platform = this.platformBusy();
    if (platform) return platform;
    const states = await this.store.states();
    for (const call of this.calls.all()) {
      // A turn its room gave up (an operator's /pass): its model call ends now, as the stopped call would.
      if (states.get(call.room)?.current?.ask.id === call.ask?.id) continue;
      if (!call.stopped) return `${call.room}: @${call.agent}'s turn waits though the room moved on`;
      this.calls.release(call.room, undefined);
      return `${call.room}: @${call.agent}'s stopped turn ends`;
    }
    for (const [key, state] of states) {
      if (state.posts.length > 0) return `${key} has posts under way`;
      if (state.batch) return `${key} has a batched call`;
      const current = state.current;
      if (current) {
        if (this.calls.waiting(key)?.agent !== current.ask.agent) return `${key}: @${current.ask.agent}'s turn runs`;
      } else if (!state.holding && state.queue.some((ask) => !ask.held)) {
        return `${key} has asks that did not start`;
      }
    }
    if ((await this.store.store.rooms.notes()).length > 0) return 'notes between rooms are under way';
    return undefined;
  }

  /** The step's observations. */
  private collect(): Observed[] {
    const observed: Observed[] = [];
    for (const call of this.calls.started.splice(0)) {
      const ask = call.ask;
      if (!ask || ask.agent !== call.agent) {
        throw new Error(`@${call.agent} was asked in ${call.room}, but the room started ${ask?.agent ?? 'no turn'}`);
      }
      observed.push({
        kind: 'ask',
        room: this.scriptRoom(call.room),
        agent: ask.agent,
        reason: ask.reason,
        about: ask.about,
        requests: [...ask.requests],
        humans: ask.questions.map((q) => q.human),
        ...(ask.resume ? { resumes: ask.resume.id } : {}),
        frame: frameIn(call.request),
      });
    }
    observed.push(...this.takePosts(), ...this.store.takeRequests());
    for (const { room, reason } of this.log.takeHandBacks()) {
      observed.push({ kind: 'hand-back', room: this.scriptRoom(room), reason });
    }
    for (const result of this.calls.actions.splice(0)) observed.push({ kind: 'action', result });
    return observed;
  }
}

/** The oracle as a shell and the model share it: a copy whose replies the shell may rewrite. */
export function sharedOracle(oracle: Oracle): MutableOracle {
  return Object.fromEntries(Object.entries(oracle).map(([agent, replies]) => [agent, [...replies]]));
}
