import type { webApi } from '@slack/bolt';
import { personName } from '../shared/mention-name.js';
import { withRateLimitRetry } from './web-call.js';

interface Person {
  /** As the core sees it: `@name` in text and the author name. */
  readonly name: string;
  readonly isBot: boolean;
}

/**
 * Who is who in the workspace: our agents' bot users (known from auth.test) and the
 * humans we have met (fetched once with users.info, then cached), both ways
 * (id → name for inbound text, name → id for outbound mentions).
 */
export class Directory {
  private readonly people = new Map<string, Person>();
  private readonly byName = new Map<string, string>();
  private readonly pending = new Map<string, Promise<Person | undefined>>();
  /** Our agents' names, lower-cased: nobody else is shown or mentioned under one. */
  private readonly agents = new Set<string>();

  /** Registers one of our agents' bot users; its mention reads `@agentname`. */
  addAgent(userId: string, agentName: string): void {
    this.agents.add(agentName.toLowerCase());
    // Someone met before under this name is renamed: the name is the agent's now.
    const holder = this.byName.get(agentName.toLowerCase());
    const met = holder === undefined ? undefined : this.people.get(holder);
    if (holder !== undefined && holder !== userId && met) {
      this.byName.delete(agentName.toLowerCase());
      this.remember(holder, { ...met, name: this.personName(met.name) });
    }
    this.remember(userId, { name: agentName, isBot: true });
  }

  /** How someone who is not one of our agents, with this display name, is shown and mentioned. */
  personName(displayName: string): string {
    return personName(displayName, (name) => this.agents.has(name.toLowerCase()));
  }

  nameOf(userId: string): string | undefined {
    return this.people.get(userId)?.name;
  }

  /** The user id for an outbound `@name` (case-insensitive), if we know that name. */
  idFor(name: string): string | undefined {
    return this.byName.get(name.toLowerCase());
  }

  /** Makes sure each id has a name, asking Slack once per unknown user; failures leave the id unnamed. */
  async learn(client: webApi.WebClient, userIds: readonly string[]): Promise<void> {
    await Promise.all(userIds.filter((id) => !this.people.has(id)).map((id) => this.lookup(client, id)));
  }

  private lookup(client: webApi.WebClient, userId: string): Promise<Person | undefined> {
    let pending = this.pending.get(userId);
    if (!pending) {
      pending = withRateLimitRetry(() => client.users.info({ user: userId }))
        .then((result) => {
          const user = result.user;
          if (!user) return undefined;
          const display =
            user.profile?.display_name || user.profile?.real_name || user.real_name || user.name || userId;
          const person = { name: this.personName(display), isBot: Boolean(user.is_bot) };
          this.remember(userId, person);
          return person;
        })
        .catch(() => undefined)
        .finally(() => this.pending.delete(userId));
      this.pending.set(userId, pending);
    }
    return pending;
  }

  private remember(userId: string, person: Person): void {
    this.people.set(userId, person);
    const key = person.name.toLowerCase();
    // A bot's name wins over a human who happens to display the same name (an agent's is never given to one).
    const holder = this.byName.get(key);
    if (!holder || !this.people.get(holder)?.isBot || person.isBot) this.byName.set(key, userId);
  }
}
