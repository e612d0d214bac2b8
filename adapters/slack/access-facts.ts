/**
 * What the access policy reads of a Slack message that its event does not carry (docs/trust.md): the author's user
 * groups (ACCESS_ROLES and agent files' `access.roles` with `S…` ids, or `group:` names holding them) and the
 * channel's name (ACCESS_CHANNELS with `#names`). One `usergroups.list` per workspace answers every member's groups
 * (kept five minutes); one `conversations.info` per channel its name (kept an hour). A call that fails (a missing
 * scope, Slack down) leaves them out, logged once per pause: the policy then reads the ids alone, as before.
 */
import type { webApi } from '@slack/bolt';
import type { Logger } from '../../src/log.js';
import type { Inbound } from '../../src/ports.js';
import { withRateLimitRetry } from './web-call.js';

/** How long a workspace's groups and their members are believed (a change in Slack shows within this). */
export const GROUPS_TTL_MS = 5 * 60_000;
const NAME_TTL_MS = 60 * 60_000;

interface Groups {
  readonly at: number;
  /** Each user's group ids; undefined: the call failed (no groups read until the next try). */
  readonly byUser: ReadonlyMap<string, readonly string[]> | undefined;
}

export class AccessFacts {
  private readonly groups = new Map<string, Promise<Groups>>();
  private readonly names = new Map<string, { at: number; name: Promise<string | undefined> }>();

  constructor(
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The message with its author's user groups and its channel's name, where Slack tells them. */
  async fill(teamId: string, client: webApi.WebClient, inbound: Inbound): Promise<Inbound> {
    if (inbound.author.kind !== 'human') return inbound;
    const channel = inbound.channel.split('/')[0] ?? inbound.channel;
    const [byUser, channelName] = await Promise.all([
      this.groupsOf(teamId, client),
      inbound.direct ? undefined : this.nameOf(client, channel),
    ]);
    const roles = byUser?.get(inbound.author.id);
    return {
      ...inbound,
      author: roles && roles.length > 0 ? { ...inbound.author, roles } : inbound.author,
      ...(channelName ? { channelName } : {}),
    };
  }

  private async groupsOf(teamId: string, client: webApi.WebClient): Promise<Groups['byUser']> {
    const now = this.clock();
    const cached = this.groups.get(teamId);
    if (cached) {
      const known = await cached;
      if (now - known.at < GROUPS_TTL_MS) return known.byUser;
    }
    const loading = this.load(client, now);
    this.groups.set(teamId, loading);
    return (await loading).byUser;
  }

  private async load(client: webApi.WebClient, at: number): Promise<Groups> {
    try {
      const answer = await withRateLimitRetry(() => client.usergroups.list({ include_users: true }));
      const byUser = new Map<string, string[]>();
      for (const group of answer.usergroups ?? []) {
        if (!group.id) continue;
        for (const user of group.users ?? []) byUser.set(user, [...(byUser.get(user) ?? []), group.id]);
      }
      return { at, byUser };
    } catch (error) {
      this.log.warn(
        { err: error },
        "could not read Slack's user groups (the app needs usergroups:read): ACCESS_ROLES reads no Slack group for five minutes",
      );
      return { at, byUser: undefined };
    }
  }

  private nameOf(client: webApi.WebClient, channel: string): Promise<string | undefined> {
    const now = this.clock();
    const cached = this.names.get(channel);
    if (cached && now - cached.at < NAME_TTL_MS) return cached.name;
    const name = withRateLimitRetry(() => client.conversations.info({ channel }))
      .then((answer) => answer.channel?.name)
      .catch((error: unknown) => {
        this.log.warn(
          { err: error, channel },
          "could not read a Slack channel's name: #names in ACCESS_CHANNELS miss it",
        );
        return undefined;
      });
    this.names.set(channel, { at: now, name });
    return name;
  }
}
