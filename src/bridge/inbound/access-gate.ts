/**
 * Who may make the agents act, at the door (docs/trust.md). A room message is read against the access policy and
 * carries the agents its author may wake into the room's decision (rule 16: it is history either way). A direct
 * message is let in by DM_POLICY: `allow` by the access policy, `off` never, `pair` once an operator approved the
 * person's one-time code (`/pair <code>`); until then nothing they write is stored or reaches a model. Operators are
 * always let in. The terminal room (the operator's own) and the web room (its people are invited) are not gated here.
 */
import { randomInt } from 'node:crypto';
import { type AccessPolicy, type AccessRule, type Asker, describeRule, names, wakeable } from '../../access/policy.js';
import type { Logger } from '../../log.js';
import type { CommandEvent, Inbound } from '../../ports.js';
import type { AccessPort } from '../../store/access-port.js';

/** The platforms whose people the policy reads (the others have their own door). */
const GATED: ReadonlySet<string> = new Set(['discord', 'slack']);
/** Codes waiting for an operator, per platform: more strangers are told to try later. */
export const MAX_PENDING_CODES = 3;
/** Wrong codes an operator may give in LOCKOUT_MS before `/pair` refuses them for LOCKOUT_MS. */
export const MAX_WRONG_CODES = 5;
export const LOCKOUT_MS = 15 * 60_000;
/** A person who writes again before their code expires is reminded at most this often. */
const REMIND_MS = 10 * 60_000;
/** How long a pairing found in the store is believed without asking it again (a revocation elsewhere waits this). */
const PAIRED_CACHE_MS = 30_000;
/** Letters that cannot be mistaken for one another (no 0/O, 1/I/L). */
const CODE_LETTERS = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

export type DmPolicy = 'pair' | 'allow' | 'off';

export interface AccessGateDeps {
  readonly policy: AccessPolicy;
  readonly dm: DmPolicy;
  readonly store: AccessPort;
  /** Configured agents, in order. */
  readonly agents: readonly string[];
  /** Posts a line of the bridge's own (not stored) into a room, through `agent`'s identity in a DM. */
  readonly tell: (platform: string, channel: string, agent: string | undefined, text: string) => Promise<void>;
  readonly clock: () => number;
  readonly log: Logger;
  readonly codeMinutes: number;
  /** Whether the DM's room waits for this person's answer (an agent asked them there). */
  readonly expected?:
    | ((platform: string, channel: string, agent: string, person: string) => Promise<boolean>)
    | undefined;
}

/** What the policy says of a room message: the agents its author may wake, when not every agent. */
export interface Wakeable {
  readonly mayWake?: readonly string[];
  readonly refused?: 'user' | 'channel';
}

const asker = (event: Pick<Inbound, 'platform' | 'channel' | 'author' | 'channelName'>): Asker => ({
  platform: event.platform,
  userId: event.author.id,
  roles: event.author.roles,
  channel: event.channel,
  channelName: event.channelName,
});

export function newCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += CODE_LETTERS[randomInt(CODE_LETTERS.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** A code as an operator may type it: any case, with or without the dash or spaces. */
export function normaliseCode(text: string): string {
  const bare = text.toUpperCase().replace(/[\s-]/g, '');
  return bare.length === 8 ? `${bare.slice(0, 4)}-${bare.slice(4)}` : bare;
}

export class AccessGate {
  private readonly paired = new Map<string, number>();
  private readonly reminded = new Map<string, number>();
  private readonly wrong = new Map<string, number[]>();
  /** Where each waiting person was told their code (to tell them when it is approved). */
  private readonly waiting = new Map<string, { platform: string; channel: string; agent: string }>();

  /** No list narrows anyone: a room message is not read against the policy at all (the usual install). */
  private open = true;
  private policy: AccessPolicy;
  private dm: DmPolicy;

  constructor(private readonly deps: AccessGateDeps) {
    this.policy = deps.policy;
    this.dm = deps.dm;
    this.update(deps.policy, deps.dm);
  }

  /** A policy read again (the settings or an agent file changed): in force from the next message, no restart. */
  update(policy: AccessPolicy, dm: DmPolicy): void {
    const empty = (r: AccessRule) => r.users.length === 0 && r.roles.length === 0 && r.channels.length === 0;
    this.policy = policy;
    this.dm = dm;
    this.open = empty(policy.rule) && [...policy.agents.values()].every(empty);
  }

  /** Whether the policy is read on this platform (Discord, Slack; the web and terminal rooms have their own door). */
  gates(platform: string): boolean {
    return GATED.has(platform);
  }

  /** A room message's author, read against the policy (rule 16); `{}` when they may wake every agent. */
  wakeable(event: Inbound): Wakeable {
    if (this.open || !GATED.has(event.platform) || event.direct || event.author.kind !== 'human') return {};
    const { allowed, refused } = wakeable(this.policy, asker(event), this.deps.agents);
    if (refused.size === 0) return {};
    const why = [...refused.values()].includes('channel') ? 'channel' : 'user';
    return { mayWake: allowed, refused: why };
  }

  /** Whether a direct message may go on to its room; when not, its author has been told why (not too often). */
  async admitDirect(event: Inbound): Promise<boolean> {
    const agent = event.direct?.agent;
    if (!agent || !GATED.has(event.platform) || event.author.kind !== 'human') return true;
    const { policy, dm } = this;
    const who = asker(event);
    if (policy.operators.has(who.userId)) return true;
    if (dm === 'off') {
      this.remind(event, agent, 'The agents take no direct messages here: write to them in a channel they are in.');
      return false;
    }
    if (dm === 'allow') {
      if (wakeable(policy, who, [agent]).allowed.length > 0) return true;
      this.remind(event, agent, `${agent} takes direct messages only from people on the bridge's access list.`);
      return false;
    }
    const own = policy.agents.get(agent.toLowerCase());
    if (names(policy.rule, who) || (own && names(own, who))) return true;
    if (await this.isPaired(event.platform, who.userId)) return true;
    if (await this.deps.expected?.(event.platform, event.channel, agent, event.author.name)) return true;
    await this.pairing(event, agent);
    return false;
  }

  private async isPaired(platform: string, userId: string): Promise<boolean> {
    const key = `${platform}:${userId}`;
    const now = this.deps.clock();
    if ((this.paired.get(key) ?? 0) > now) return true;
    if (!(await this.deps.store.paired(platform, userId))) return false;
    this.paired.set(key, now + PAIRED_CACHE_MS);
    return true;
  }

  /** A stranger's DM under `pair`: their code (made now, or reminded), or word that too many wait. */
  private async pairing(event: Inbound, agent: string): Promise<void> {
    const now = this.deps.clock();
    const minutes = this.deps.codeMinutes;
    const got = await this.deps.store.requestCode({
      code: newCode(),
      platform: event.platform,
      userId: event.author.id,
      name: event.author.name,
      now,
      expiresAt: now + minutes * 60_000,
      maxPending: MAX_PENDING_CODES,
    });
    if (got === 'full') {
      this.remind(event, agent, 'Too many people are waiting for approval right now: try again in an hour.');
      return;
    }
    this.waiting.set(got.code, { platform: event.platform, channel: event.channel, agent });
    const text =
      `${agent} answers direct messages from approved people only; nothing you write here reaches it until then. ` +
      `Ask an operator to approve you with: /pair ${got.code} (valid for ${minutes} minutes from your first message).`;
    if (got.fresh) {
      this.deps.log.info({ platform: event.platform, user: event.author.id }, 'a pairing code was given');
      this.reminded.set(`${event.platform}:${event.author.id}`, now);
      await this.deps.tell(event.platform, event.channel, agent, text);
    } else {
      this.remind(event, agent, text);
    }
  }

  /** Tells the author a line, at most once per REMIND_MS. */
  private remind(event: Inbound, agent: string, text: string): void {
    const key = `${event.platform}:${event.author.id}`;
    const now = this.deps.clock();
    if (now - (this.reminded.get(key) ?? Number.NEGATIVE_INFINITY) < REMIND_MS) return;
    this.reminded.set(key, now);
    if (this.reminded.size > 10_000) this.reminded.delete(this.reminded.keys().next().value as string);
    void this.deps.tell(event.platform, event.channel, agent, text);
  }

  /**
   * Whether a room's line for one person (rule 16) should be shown: not when they were told in the same channel (a
   * Slack thread is a room of its own) within the last REMIND_MS.
   */
  shouldTell(platform: string, channel: string, userId: string): boolean {
    const key = `${platform}:${channel.split('/')[0]}:${userId}`;
    const now = this.deps.clock();
    if (now - (this.reminded.get(key) ?? Number.NEGATIVE_INFINITY) < REMIND_MS) return false;
    this.reminded.set(key, now);
    return true;
  }

  /** `/pair` and `/access`: the answer. */
  async command(event: CommandEvent): Promise<string> {
    if (event.name === 'access') return this.describe(event);
    if (!event.isOperator) return 'Only operators can use /pair.';
    const args = event.args.trim();
    const now = this.deps.clock();
    if (args === '' || args === 'list') return this.listText(now);
    const revoke = /^revoke\s+@?(.+)$/i.exec(args);
    if (revoke?.[1]) {
      const count = await this.deps.store.revoke(undefined, revoke[1].trim());
      this.paired.clear();
      return count > 0 ? `${revoke[1].trim()} may no longer DM the agents.` : `Nobody paired is called ${revoke[1]}.`;
    }
    const key = `${event.platform}:${event.user.id}`;
    const recent = (this.wrong.get(key) ?? []).filter((at) => now - at < LOCKOUT_MS);
    if (recent.length >= MAX_WRONG_CODES) {
      return `Too many wrong codes: /pair is locked for you until ${new Date((recent[0] ?? now) + LOCKOUT_MS).toISOString().slice(11, 16)} UTC.`;
    }
    const code = normaliseCode(args);
    const person = await this.deps.store.approve(code, `${event.platform}:${event.user.id}`, now);
    if (!person) {
      this.wrong.set(key, [...recent, now]);
      this.deps.log.warn({ by: event.user.id, platform: event.platform }, 'a wrong pairing code was given');
      return `No code ${code} is waiting (codes expire after ${this.deps.codeMinutes} minutes). /pair lists those that are.`;
    }
    this.wrong.delete(key);
    this.paired.set(`${person.platform}:${person.userId}`, now + PAIRED_CACHE_MS);
    this.deps.log.info({ by: event.user.id, user: person.userId, platform: person.platform }, 'a person was paired');
    const where = this.waiting.get(code);
    this.waiting.delete(code);
    if (where) {
      void this.deps.tell(
        where.platform,
        where.channel,
        where.agent,
        'An operator approved you: write again, and the agents answer you here.',
      );
    }
    return `${person.name} (${person.platform} ${person.userId}) may now DM the agents.`;
  }

  private async listText(now: number): Promise<string> {
    const { paired, pending } = await this.deps.store.list(now);
    const minutes = (at: number) => Math.max(1, Math.round((at - now) / 60_000));
    const lines = [
      pending.length === 0
        ? 'No pairing codes are waiting.'
        : `Waiting for approval: ${pending.map((p) => `${p.code} ${p.name} (${p.platform} ${p.userId}, ${minutes(p.expiresAt)} min left)`).join('; ')}.`,
      paired.length === 0
        ? 'Nobody is paired.'
        : `Paired: ${paired.map((p) => `${p.name} (${p.platform} ${p.userId})`).join(', ')}.`,
      'Approve with /pair <code>; end one with /pair revoke <name or id>.',
    ];
    return lines.join('\n');
  }

  /** `/access`: the policy in force in this room. */
  describe(where: Pick<CommandEvent, 'platform'>): string {
    const { policy, dm } = this;
    if (!GATED.has(where.platform)) {
      return where.platform === 'web'
        ? 'The web room lets in the people invited with npm run web:invite.'
        : 'The terminal room is the operator’s own: everything typed here reaches the agents.';
    }
    const lines = [`Who may wake the agents: ${describeRule(policy.rule)}.`];
    for (const [agent, rule] of policy.agents) lines.push(`${agent}: also only ${describeRule(rule)}.`);
    lines.push(
      dm === 'pair'
        ? 'Direct messages: pair (a first DM gets a code; an operator approves it with /pair <code>).'
        : dm === 'allow'
          ? 'Direct messages: allow (the same lists).'
          : 'Direct messages: off.',
    );
    if (policy.operators.size > 0) lines.push(`Operators (always let in): ${[...policy.operators].join(', ')}.`);
    return lines.join('\n');
  }
}
