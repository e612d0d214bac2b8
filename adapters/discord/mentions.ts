/**
 * Mentions both ways. Inbound, `<@id>` / `<@!id>` becomes `@agent` for one of our bots and `@Display_Name` for a
 * human (whitespace turned into `_` so the router's `@name` rule can read it); `<@&role>` of a bot's managed role
 * (the one the @-picker offers first) is a mention of that bot's agent. Outbound, `@agent` and a known
 * `@Human_Name` become real mentions; text in code is left alone. Only mentions written in the text count:
 * a reply's ping is not in the text, so it is never a mention.
 */
import { mapProse } from '../../src/room/text/code-spans.js';
import { mentionName, personName } from '../shared/mention-name.js';

/** Who is who: our agents' bot user ids, and humans met so far (id ↔ mention name). */
export class Directory {
  private readonly agentByUser = new Map<string, string>();
  private readonly userByAgent = new Map<string, string>();
  private readonly humanById = new Map<string, string>();
  private readonly humanByName = new Map<string, string>();
  /** Managed roles of bots (`tags.bot_id`): role id → bot user id. */
  private readonly botByRole = new Map<string, string>();

  setAgent(agent: string, userId: string): void {
    this.agentByUser.set(userId, agent);
    this.userByAgent.set(agent.toLowerCase(), userId);
    // A human met before under this name is renamed: the name is the agent's now.
    const human = this.humanByName.get(agent.toLowerCase());
    if (human !== undefined) this.rememberHuman(human, this.humanById.get(human) ?? agent);
  }

  agentOf(userId: string): string | undefined {
    return this.agentByUser.get(userId);
  }

  userOfAgent(agent: string): string | undefined {
    return this.userByAgent.get(agent.toLowerCase());
  }

  /** Notes a guild role; a bot's managed role (`tags.bot_id`) then stands for that bot. */
  setRole(roleId: string, botUserId: string | undefined): void {
    if (botUserId) this.botByRole.set(roleId, botUserId);
    else this.botByRole.delete(roleId);
  }

  forgetRole(roleId: string): void {
    this.botByRole.delete(roleId);
  }

  /** The agent whose bot a role belongs to, if it is one of our bots' managed roles. */
  agentOfRole(roleId: string): string | undefined {
    const bot = this.botByRole.get(roleId);
    return bot ? this.agentOf(bot) : undefined;
  }

  isAgentName(name: string): boolean {
    return this.userByAgent.has(name.toLowerCase());
  }

  /** How a human with this display name is shown and mentioned: never under an agent's name. */
  personName(displayName: string): string {
    return personName(displayName, (name) => this.isAgentName(name));
  }

  /** Remembers a human (bounded: the oldest entries go first). */
  rememberHuman(userId: string, displayName: string): void {
    const name = this.personName(displayName);
    if (!name) return;
    const previous = this.humanById.get(userId);
    if (previous) this.humanByName.delete(previous.toLowerCase());
    this.humanById.delete(userId);
    this.humanById.set(userId, name);
    this.humanByName.set(name.toLowerCase(), userId);
    if (this.humanById.size > 5000) {
      const [oldestId, oldestName] = this.humanById.entries().next().value as [string, string];
      this.humanById.delete(oldestId);
      this.humanByName.delete(oldestName.toLowerCase());
    }
  }

  humanName(userId: string): string | undefined {
    return this.humanById.get(userId);
  }

  humanId(name: string): string | undefined {
    return this.humanByName.get(name.toLowerCase());
  }
}

/**
 * Platform mentions → `@name`. `extra` names users mentioned in this very message (from its `mentions`);
 * `roleName` names other roles, shown as `@Role_Name` unless that reads as an agent's name.
 */
export function mentionsToNames(
  text: string,
  directory: Directory,
  extra?: ReadonlyMap<string, string>,
  roleName: (id: string) => string | undefined = () => undefined,
): string {
  return text.replace(/<@([!&]?)(\d+)>/g, (raw, kind: string, id: string) => {
    if (kind === '&') {
      const agent = directory.agentOfRole(id);
      if (agent) return `@${agent}`;
      const role = mentionName(roleName(id) ?? '');
      return role && !directory.isAgentName(role) ? `@${role}` : raw;
    }
    const agent = directory.agentOf(id);
    if (agent) return `@${agent}`;
    const display = extra?.get(id);
    if (display) return `@${directory.personName(display)}`;
    const human = directory.humanName(id);
    return human ? `@${human}` : raw;
  });
}

/**
 * `@name` shaped like the router's mentions (not after a word character, `.`, `@`, `+` or `-`), widened to any
 * letter so that humans with names like `@José` can be mentioned back.
 */
const MENTION = /(^|[^\p{L}\p{N}_.@+-])@([\p{L}\p{N}_-]+)/gu;

/** `@name` → `<@id>` for our agents and for humans the directory knows; code and everything else stay as written. */
export function namesToMentions(text: string, directory: Directory): string {
  return mapProse(text, (plain) =>
    plain.replace(MENTION, (whole, before: string, name: string) => {
      const bare = name.replace(/-+$/, '');
      const id = directory.userOfAgent(bare) ?? directory.humanId(bare);
      return id ? `${before}<@${id}>${name.slice(bare.length)}` : whole;
    }),
  );
}
