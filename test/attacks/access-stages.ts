/**
 * The access cases' platforms: a whole bridge on the Discord or Slack fake, driven by the steps of a case
 * (corpus.ts) and read back as what every person could see — the lines the bots showed, the model calls made, the
 * commands run, what was stored of the DMs.
 */

import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import type { FakeMessage as DiscordMessage } from '../fakes/discord/world.js';
import type {
  FakeChannel as SlackChannel,
  FakeHuman as SlackHuman,
  FakeMessage as SlackMessage,
} from '../fakes/slack/types.js';
import { agentOf } from '../helpers/harness.js';
import { type SlackHarness, startSlackHarness } from '../slack/slack-harness.js';
import type { AccessCase } from './corpus.js';

/** Everyone a case may name (the fakes seat them all; the case's lists say who is let in). */
export const PEOPLE = ['alice', 'carol', 'mallory', 'eve', 'trent', 'peggy', 'otto'];

export interface Line {
  readonly in: string;
  readonly to?: string;
  readonly text: string;
}

/** A person's message in a channel (see corpus.ts). */
export interface Say {
  readonly who: string;
  readonly in: string;
  readonly text: string;
  readonly reply?: string | undefined;
  readonly thread?: string | undefined;
  readonly label?: string | undefined;
}

export interface Stage {
  /** Model calls so far, and the agents asked. */
  calls(): string[];
  /** Commands run in sandboxes so far. */
  commands(): number;
  say(step: Say): Promise<void>;
  edit(label: string, text: string): Promise<void>;
  dm(who: string, to: string, text: string): Promise<void>;
  slash(who: string, where: string, command: string, args: string): Promise<string>;
  /** Moves the bridge's clock on. */
  later(minutes: number): void;
  /** Stops the bridge; starts it again, waiting until its catch-up took in what was said meanwhile. */
  down(): Promise<void>;
  up(): Promise<void>;
  lines(): Line[];
  /** Whether any DM's message was stored. */
  dmsStored(): Promise<boolean>;
  /** Waits until every room is idle. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const CODE = /\/pair ([A-Z0-9]{4}-[A-Z0-9]{4})/;

/** Waits for `predicate` (polled), up to `ms`. */
export async function until(predicate: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The text with `@agent` made a mention of that agent's bot, and `{{code:who}}` the code `who` was given. */
function resolve(text: string, c: AccessCase, mention: (agent: string) => string, code: (who: string) => string) {
  const agents = c.agents.map((a) => a.name);
  return text
    .replace(/\{\{code:([a-z]+)\}\}/g, (_, who: string) => code(who))
    .replace(/@([a-z]+)\b/g, (whole, name: string) => (agents.includes(name) ? mention(name) : whole));
}

class DiscordStage implements Stage {
  private offset = 0;
  /** Messages said while the bridge was down. */
  private missed: string[] | undefined;
  private readonly labels = new Map<string, DiscordMessage>();
  private readonly dms = new Map<string, string>();

  private constructor(
    private readonly c: AccessCase,
    private readonly h: DiscordHarness,
    private readonly clock: { offset: number },
  ) {}

  static async start(c: AccessCase): Promise<DiscordStage> {
    const clock = { offset: 0 };
    const h = await startDiscordHarness({
      agents: c.agents.map((a, i) => ({ ...a, ...(i === 0 ? { control: true } : {}) })),
      humans: PEOPLE.map((name) => ({ name })),
      operators: c.operators,
      accessUsers: c.access_users,
      env: c.env,
      clock: () => Date.now() + clock.offset,
    });
    h.llm.respond((request) => ({ content: `${agentOf(request)} here` }));
    return new DiscordStage(c, h, clock);
  }

  private text(text: string): string {
    return resolve(
      text,
      this.c,
      (agent) => `<@${this.h.discord.bot(`${agent}-bot`).id}>`,
      (who) => this.codeOf(who),
    );
  }

  private codeOf(who: string): string {
    for (const channel of this.dms.values()) {
      const recipient = this.h.discord.messages(channel).find((m) => m.authorId === this.h.discord.human(who).id);
      if (!recipient) continue;
      for (const m of this.h.discord.botMessages(channel)) {
        const code = CODE.exec(m.content)?.[1];
        if (code) return code;
      }
    }
    throw new Error(`${who} was given no pairing code`);
  }

  calls(): string[] {
    return this.h.llm.requests.map(agentOf);
  }

  commands(): number {
    return this.h.sandbox.calls.length;
  }

  async say(step: Say): Promise<void> {
    const { discord } = this.h;
    const replyTo = step.reply ? discord.botMessages(step.in, `${step.reply}-bot`).at(-1)?.id : undefined;
    if (step.reply && !replyTo) throw new Error(`${step.reply} has said nothing in ${step.in} to reply to`);
    const sent = discord.humanSays(step.in, step.who, this.text(step.text), replyTo ? { replyTo } : undefined);
    if (step.label) this.labels.set(step.label, sent);
    if (this.missed) this.missed.push(sent.id);
    else await this.h.settle(sent.id);
  }

  async down(): Promise<void> {
    await this.h.down();
    this.missed = [];
  }

  async up(): Promise<void> {
    const missed = this.missed ?? [];
    this.missed = undefined;
    await this.h.up();
    const received = () => missed.every((id) => this.h.adapter.received.some((e) => e.messageId === id));
    await until(received, 20_000, 'the catch-up');
    await this.h.bridge.idle();
  }

  async edit(label: string, text: string): Promise<void> {
    const original = this.labels.get(label);
    if (!original) throw new Error(`no step labelled ${label}`);
    const seen = () => this.h.adapter.received.filter((e) => e.edit?.of === original.id).length;
    const before = seen();
    this.h.discord.humanEdits(original, this.text(text));
    await until(() => seen() > before, 20_000, 'the edit');
    await this.h.bridge.idle();
  }

  async dm(who: string, to: string, text: string): Promise<void> {
    const sent = this.h.discord.dm(who, `${to}-bot`, this.text(text));
    this.dms.set(`${who}:${to}`, sent.channelId);
    await this.h.settle(sent.id);
  }

  async slash(who: string, where: string, command: string, args: string): Promise<string> {
    const control = `${this.c.agents[0]?.name}-bot`;
    const options = command === 'pair' && args ? { code: this.text(args) } : undefined;
    const reply = await this.h.discord.slash(control, who, where, command, options);
    return reply.content ?? '';
  }

  later(minutes: number): void {
    this.offset += minutes * 60_000;
    this.clock.offset = this.offset;
  }

  lines(): Line[] {
    const { discord } = this.h;
    const out: Line[] = [];
    const named = (text: string) => {
      const m = /^<@(\d+)>: /.exec(text);
      const who = m ? PEOPLE.find((p) => discord.human(p).id === m[1]) : undefined;
      return who ? { to: who, text: text.slice(m?.[0].length ?? 0) } : { text };
    };
    for (const channel of ['general', 'dev'])
      for (const m of discord.botMessages(channel)) out.push({ in: channel, ...named(m.content) });
    for (const [key, channel] of this.dms) {
      const who = key.split(':')[0] ?? '';
      for (const m of discord.botMessages(channel)) out.push({ in: `dm:${who}`, to: who, text: m.content });
    }
    return out;
  }

  async dmsStored(): Promise<boolean> {
    for (const channel of new Set(this.dms.values())) {
      if ((await this.h.store.rooms.lastPlatformMessageId('discord', channel)) !== undefined) return true;
    }
    return false;
  }

  async idle(): Promise<void> {
    await this.h.bridge.idle();
  }

  async close(): Promise<void> {
    await this.h.close();
  }
}

class SlackStage implements Stage {
  private readonly labels = new Map<string, SlackMessage>();
  private readonly dms = new Map<string, SlackChannel>();
  private readonly channels = new Map<string, SlackChannel>();

  private constructor(
    private readonly c: AccessCase,
    private readonly h: SlackHarness,
    private readonly people: Map<string, SlackHuman>,
  ) {}

  static async start(c: AccessCase): Promise<SlackStage> {
    // The harness seats alice and olga (an operator); the case's other people join #general (otto is olga here).
    const others = PEOPLE.filter((p) => p !== 'alice' && p !== 'otto');
    const h = await startSlackHarness({
      agents: c.agents.map((a, i) => ({ ...a, ...(i === 0 ? { control: true } : {}) })),
      humans: others,
      accessUsers: c.access_users,
      env: c.env,
    });
    const people = new Map<string, SlackHuman>([
      ['alice', h.alice],
      ['otto', h.olga],
    ]);
    for (const human of h.slack.workspace.humans.values())
      if (others.includes(human.name)) people.set(human.name, human);
    h.llm.respond((request) => ({ content: `${agentOf(request)} here` }));
    return new SlackStage(c, h, people);
  }

  private person(name: string): SlackHuman {
    const human = this.people.get(name);
    if (!human) throw new Error(`nobody called ${name}`);
    return human;
  }

  private text(text: string): string {
    return resolve(
      text,
      this.c,
      (agent) => `<@${this.h.apps[agent]?.botUserId}>`,
      () => {
        throw new Error('pairing codes are read on Discord only');
      },
    );
  }

  calls(): string[] {
    return this.h.llm.requests.map(agentOf);
  }

  commands(): number {
    return this.h.sandbox.calls.length;
  }

  async say(step: Say): Promise<void> {
    const channel = this.channel(step.in);
    const thread = step.thread ? this.labels.get(step.thread) : undefined;
    if (step.thread && !thread) throw new Error(`no step labelled ${step.thread}`);
    const who = this.person(step.who);
    const sent = this.h.slack.say(who, channel, this.text(step.text), thread ? { threadTs: thread.ts } : {});
    if (step.label) this.labels.set(step.label, sent);
    await this.h.settle(sent.ts);
  }

  /** #general, or a channel made here with everyone in it. */
  private channel(name: string): SlackChannel {
    if (name === 'general') return this.h.general;
    const known = this.channels.get(name);
    if (known) return known;
    const made = this.h.slack.addChannel(name, [...this.people.values(), ...Object.values(this.h.apps)]);
    this.channels.set(name, made);
    return made;
  }

  async edit(label: string, text: string): Promise<void> {
    const original = this.labels.get(label);
    if (!original) throw new Error(`no step labelled ${label}`);
    const seen = () => this.h.adapter.received.filter((e) => e.edit?.of === original.ts).length;
    const before = seen();
    this.h.slack.edit(original, this.text(text));
    await until(() => seen() > before, 20_000, 'the edit');
    await this.h.bridge.idle();
  }

  async dm(who: string, to: string, text: string): Promise<void> {
    const app = this.h.apps[to];
    if (!app) throw new Error(`no agent ${to}`);
    const channel = this.h.slack.dm(app, this.person(who));
    this.dms.set(`${who}:${to}`, channel);
    const sent = this.h.slack.say(this.person(who), channel, this.text(text));
    await this.h.settle(sent.ts);
  }

  async slash(who: string, _where: string, command: string, args: string): Promise<string> {
    const app = this.h.apps[this.c.agents[0]?.name ?? ''];
    if (!app) throw new Error('no control agent');
    const before = this.h.slack.slashResponses.length;
    const user = this.person(who);
    this.h.slack.slashCommand(app, { command: `/${command}`, text: this.text(args), user, channel: this.h.general });
    await until(() => this.h.slack.slashResponses.length > before, 20_000, 'the command’s answer');
    return String(this.h.slack.slashResponses.at(-1)?.body.text ?? '');
  }

  later(): void {
    throw new Error('the Slack cases keep the real clock');
  }

  async down(): Promise<void> {
    throw new Error('the Slack cases run without restarts (the Discord ones restart)');
  }

  async up(): Promise<void> {
    throw new Error('the Slack cases run without restarts (the Discord ones restart)');
  }

  lines(): Line[] {
    const { slack } = this.h;
    const nameOf = (id: string) => [...this.people].find(([, h]) => h.id === id)?.[0] ?? id;
    const rooms = new Map([['general', this.h.general], ...this.channels]);
    const where = (id: string) => [...rooms].find(([, c]) => c.id === id)?.[0] ?? id;
    const out: Line[] = [...rooms].flatMap(([name, channel]) =>
      slack.posts(channel).map((m) => ({ in: name, text: m.text })),
    );
    for (const e of slack.workspace.ephemerals) out.push({ in: where(e.channel), to: nameOf(e.user), text: e.text });
    for (const [key, channel] of this.dms) {
      const who = key.split(':')[0] ?? '';
      for (const m of slack.posts(channel)) out.push({ in: `dm:${who}`, to: who, text: m.text });
    }
    return out;
  }

  async dmsStored(): Promise<boolean> {
    for (const channel of new Set(this.dms.values())) {
      if ((await this.h.store.rooms.lastPlatformMessageId('slack', channel.id)) !== undefined) return true;
    }
    return false;
  }

  async idle(): Promise<void> {
    await this.h.bridge.idle();
  }

  async close(): Promise<void> {
    await this.h.close();
  }
}

export function startStage(c: AccessCase): Promise<Stage> {
  return c.platform === 'slack' ? SlackStage.start(c) : DiscordStage.start(c);
}
