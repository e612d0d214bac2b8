import type { APIMessage } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { factsFromApi, type InboundContext, toInbound } from '../../adapters/discord/inbound.js';
import { Directory } from '../../adapters/discord/mentions.js';

const GUILD = '1100000000000000000';
const GENERAL = '1100000000000000001';
const CODE_BOT = '1100000000000000010';
const CODE_ROLE = '1100000000000000020';
const DESIGN_ROLE = '1100000000000000021';
const ALICE = '1100000000000000030';

function context(): InboundContext {
  const directory = new Directory();
  directory.setAgent('code', CODE_BOT);
  directory.setRole(CODE_ROLE, CODE_BOT); // the bot's managed role: tags.bot_id
  directory.setRole(DESIGN_ROLE, undefined);
  const channels = new Map([[GENERAL, 'general']]);
  const roles = new Map([
    [CODE_ROLE, 'code-bot'],
    [DESIGN_ROLE, 'Design Team'],
  ]);
  return {
    directory,
    allowedBots: new Set(),
    receiver: 'code',
    channelName: (id) => channels.get(id),
    roleName: (id) => roles.get(id),
  };
}

/** A message as `GET /channels/:id/messages` returns it (API v10), by Alice, written at 2023-11-14 22:13:20 UTC. */
function message(content: string, extra: Partial<APIMessage> = {}): APIMessage {
  return {
    type: 0,
    channel_id: GENERAL,
    content,
    attachments: [],
    embeds: [],
    timestamp: '2023-11-14T22:13:20.000000+00:00',
    edited_timestamp: null,
    flags: 0,
    components: [],
    id: '1174000000000000000',
    author: {
      id: ALICE,
      username: 'alice',
      avatar: null,
      discriminator: '0',
      public_flags: 0,
      flags: 0,
      global_name: 'Alice',
    },
    mentions: [],
    mention_roles: [],
    pinned: false,
    mention_everyone: false,
    tts: false,
    ...extra,
  } as APIMessage;
}

const textOf = (content: string, extra: Partial<APIMessage> = {}) =>
  toInbound(factsFromApi(message(content, extra), false), context())?.text;

describe('Discord toInbound', () => {
  it("reads a mention of a bot's managed role as a mention of that agent", () => {
    expect(textOf(`<@&${CODE_ROLE}> can you look?`, { mention_roles: [CODE_ROLE] })).toBe('@code can you look?');
  });

  it('names other roles, and leaves unknown ones as written', () => {
    expect(textOf(`<@&${DESIGN_ROLE}> and <@&999>`, { mention_roles: [DESIGN_ROLE] })).toBe('@Design_Team and <@&999>');
  });

  it('renders <t:…> timestamps in every style, in UTC', () => {
    const at = 1_700_000_000; // the message's own time
    expect(textOf(`<t:${at}:t> <t:${at}:T>`)).toBe('22:13 UTC 22:13:20 UTC');
    expect(textOf(`<t:${at}:d> | <t:${at}:D>`)).toBe('2023-11-14 | 14 November 2023');
    expect(textOf(`<t:${at}> | <t:${at}:f>`)).toBe('14 November 2023 22:13 UTC | 14 November 2023 22:13 UTC');
    expect(textOf(`<t:${at}:F>`)).toBe('Tuesday, 14 November 2023 22:13 UTC');
    expect(textOf(`due <t:${at + 7200}:R>`)).toBe(
      'due 15 November 2023 00:13 UTC (in 2 hours from when this was written)',
    );
    expect(textOf(`since <t:${at - 3 * 86_400}:R>`)).toBe(
      'since 11 November 2023 22:13 UTC (3 days ago from when this was written)',
    );
  });

  it('renders command mentions as the command as typed', () => {
    expect(textOf('try </status:1100000000000000040> or </config set:1100000000000000041>')).toBe(
      'try /status or /config set',
    );
  });

  it('renders unlabeled channel and message links by channel name', () => {
    const channel = `https://discord.com/channels/${GUILD}/${GENERAL}`;
    expect(textOf(`see ${channel} and <${channel}/1174000000000000001>`)).toBe(
      'see #general and a message in #general',
    );
    // Unknown channels, labeled links and links in code are left as written.
    const other = `https://ptb.discord.com/channels/${GUILD}/1100000000000000099`;
    expect(textOf(`${other} [here](${channel}) \`${channel}\``)).toBe(`${other} [here](${channel}) \`${channel}\``);
  });

  it('shows channel mentions and custom emoji as plain text', () => {
    expect(textOf(`in <#${GENERAL}> and <#43> <:party:123> <a:wave:456>`)).toBe('in #general and <#43> :party: :wave:');
  });
});

describe('Discord forwards fetched from the channel history', () => {
  // A forward as the API returns it: no text of its own, a FORWARD reference, the original in message_snapshots.
  const forward = (snapshot: Record<string, unknown>) =>
    message('', {
      flags: 1 << 14,
      message_reference: { type: 1, message_id: '1173000000000000000', channel_id: GENERAL, guild_id: GUILD },
      message_snapshots: [
        {
          message: {
            type: 0,
            content: '',
            embeds: [],
            attachments: [],
            timestamp: '2023-11-14T22:00:00.000000+00:00',
            edited_timestamp: null,
            flags: 0,
            mentions: [],
            mention_roles: [],
            components: [],
            ...snapshot,
          },
        },
      ],
    } as unknown as Partial<APIMessage>);

  it("reads a forwarded message's attachments as files of the forward, downloaded as a message's own", () => {
    const asked: string[] = [];
    const inbound = toInbound(
      factsFromApi(
        forward({
          attachments: [
            {
              id: '1173000000000000001',
              filename: 'q3.pdf',
              size: 4096,
              url: 'https://cdn.discordapp.com/attachments/1/2/q3.pdf?ex=1&is=2&hm=3&',
              proxy_url: 'https://media.discordapp.net/attachments/1/2/q3.pdf',
              content_type: 'application/pdf',
            },
          ],
        }),
        false,
      ),
      {
        ...context(),
        fileOf: (attachment) => {
          asked.push(attachment.url);
          return {
            name: attachment.name,
            mimeType: attachment.contentType,
            size: attachment.size,
            download: async () => new Uint8Array(),
          };
        },
      },
    );
    expect(inbound).toMatchObject({ text: '', files: [{ name: 'q3.pdf', mimeType: 'application/pdf', size: 4096 }] });
    expect(asked).toEqual(['https://cdn.discordapp.com/attachments/1/2/q3.pdf?ex=1&is=2&hm=3&']);
  });

  it("reads a forwarded message's rich embed as the quoted text", () => {
    const embeds = [{ type: 'rich', title: 'Deploy done', description: `<@${CODE_BOT}> v2.3 is live` }];
    expect(toInbound(factsFromApi(forward({ embeds }), false), context())?.text).toBe(
      '> Deploy done\n> code v2.3 is live',
    );
  });
});
