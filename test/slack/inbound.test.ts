import { describe, expect, it } from 'vitest';
import { type SlackInboundContext, toInbound, userIdsToLearn } from '../../adapters/slack/inbound.js';

/** Our two agents' apps, as auth.test described them. */
const apps = [
  { agent: 'data', botId: 'B0DATA', botUserId: 'U0DATA' },
  { agent: 'code', botId: 'B0CODE', botUserId: 'U0CODE' },
];
const names: Record<string, string> = { U0DATA: 'data', U0CODE: 'code', U0ALICE: 'Alice_Smith' };

function context(overrides: Partial<SlackInboundContext> = {}): SlackInboundContext {
  return {
    apps,
    receiver: 'data',
    nameOf: (id) => names[id],
    allowedBots: new Set(['helper']),
    replyInThread: true,
    ...overrides,
  };
}

/** A human's channel message as the Events API delivers it (rich-text blocks beside the text, a client id). */
const human = {
  client_msg_id: '7e1c6c2e-5d9b-4d6c-9f3e-3d2b1a0c9e8f',
  type: 'message',
  text: '<@U0CODE> can you &amp; <@U0DATA|data> look at <https://example.com/q3|the Q3 sheet>?',
  user: 'U0ALICE',
  ts: '1700000000.000100',
  blocks: [{ type: 'rich_text', block_id: 'x1Y2', elements: [] }],
  team: 'T0TEAM',
  channel: 'C0GENERAL',
  event_ts: '1700000000.000100',
  channel_type: 'channel',
};

describe('Slack toInbound', () => {
  it('turns a human channel message into a thread room with plain text and @names', () => {
    expect(toInbound(human, context())).toEqual({
      platform: 'slack',
      channel: 'C0GENERAL/1700000000.000100',
      messageId: '1700000000.000100',
      author: { id: 'U0ALICE', name: 'Alice_Smith', kind: 'human' },
      text: '@code can you & @data look at the Q3 sheet (https://example.com/q3)?',
      at: 1_700_000_000_000,
    });
    expect(userIdsToLearn(human, apps)).toEqual(['U0ALICE', 'U0CODE', 'U0DATA']);
  });

  it('keeps the channel as the room when replies do not go in threads, and a thread reply in its thread', () => {
    expect(toInbound(human, context({ replyInThread: false }))?.channel).toBe('C0GENERAL');
    const reply = { ...human, ts: '1700000001.000200', thread_ts: '1700000000.000100', parent_user_id: 'U0DATA' };
    expect(toInbound(reply, context({ replyInThread: false }))?.channel).toBe('C0GENERAL/1700000000.000100');
  });

  it('makes a DM the private room of the app that received it', () => {
    const dm = { ...human, channel: 'D0ALICE', channel_type: 'im', text: 'just for you' };
    expect(toInbound(dm, context({ receiver: 'code' }))).toMatchObject({
      channel: 'D0ALICE',
      direct: { agent: 'code' },
      text: 'just for you',
    });
  });

  it("reads our agents' posts as agent messages in the channel they were posted to", () => {
    const posted = {
      bot_id: 'B0CODE',
      type: 'message',
      text: 'done, <@U0ALICE>',
      user: 'U0CODE',
      ts: '1700000002.000300',
      app_id: 'A0CODE',
      bot_profile: { id: 'B0CODE', app_id: 'A0CODE', name: 'code', deleted: false, team_id: 'T0TEAM' },
      team: 'T0TEAM',
      channel: 'C0GENERAL',
      event_ts: '1700000002.000300',
      channel_type: 'channel',
    };
    expect(toInbound(posted, context())).toMatchObject({
      channel: 'C0GENERAL',
      author: { id: 'U0CODE', name: 'code', kind: 'agent' },
      text: 'done, @Alice_Smith',
    });
    expect(userIdsToLearn(posted, apps)).toEqual(['U0ALICE']);
  });

  it("never gives an agent's name to an allowlisted foreign bot or a user only known by a mention's label", () => {
    const foreign = {
      type: 'message',
      subtype: 'bot_message',
      text: 'Build #42 passed, <@U0STRANGER|Code>',
      ts: '1700000003.000400',
      username: 'Code',
      bot_id: 'B0OTHER',
      channel: 'C0GENERAL',
      channel_type: 'channel',
    };
    const inbound = toInbound(foreign, context({ allowedBots: new Set(['b0other']) }));
    expect(inbound).toMatchObject({
      author: { id: 'B0OTHER', name: 'Code_human', kind: 'human' },
      text: 'Build #42 passed, @Code_human',
    });
  });

  it('ignores foreign bots unless allowlisted, which then count as humans', () => {
    const legacy = {
      type: 'message',
      subtype: 'bot_message',
      text: 'Build #42 passed',
      ts: '1700000003.000400',
      username: 'ci',
      bot_id: 'B0CI',
      channel: 'C0GENERAL',
      channel_type: 'channel',
    };
    expect(toInbound(legacy, context())).toBeNull();
    const helper = { ...legacy, username: 'helper', bot_id: 'B0HELP' };
    expect(toInbound(helper, context())?.author).toEqual({ id: 'B0HELP', name: 'helper', kind: 'human' });
  });

  it('ignores joins, deletions and messages without text', () => {
    const join = { ...human, subtype: 'channel_join', text: '<@U0ALICE> has joined the channel' };
    expect(toInbound(join, context())).toBeNull();
    const deleted = { type: 'message', subtype: 'message_deleted', hidden: true, channel: 'C0GENERAL', ts: '1.2' };
    expect(toInbound(deleted, context())).toBeNull();
    expect(toInbound({ ...human, text: '   ' }, context())).toBeNull();
  });

  it('renders a shared message as a quote under the comment, its mentions addressing no one', () => {
    // "Share message" with a comment: the comment is the text, the original rides in an attachment.
    const share = {
      ...human,
      ts: '1700000005.000600',
      text: '<@U0CODE> can you check this?',
      attachments: [
        {
          ts: '1699990000.000100',
          channel_id: 'C0SALES',
          channel_name: 'sales',
          is_share: true,
          color: 'D0D0D0',
          fallback: '[November 14th, 2023 10:13 PM] bob: Q3 revenue is <@U0DATA|data>’s call',
          text: 'Q3 revenue is <@U0DATA|data>’s call\nsee the sheet',
          author_id: 'U0BOB',
          author_name: 'Bob Jones',
          author_subname: 'Bob Jones',
          author_link: 'https://example.slack.com/team/U0BOB',
          mrkdwn_in: ['text'],
          id: 1,
          original_url: 'https://example.slack.com/archives/C0SALES/p1699990000000100',
          footer: 'Posted in #sales',
          from_url: 'https://example.slack.com/archives/C0SALES/p1699990000000100',
          private_channel_prompt: true,
        },
      ],
    };
    expect(toInbound(share, context())?.text).toBe(
      '@code can you check this?\n> Bob Jones: Q3 revenue is data’s call\n> see the sheet',
    );
    expect(userIdsToLearn(share, apps)).toContain('U0DATA');
  });

  it('keeps a share without a comment, and a message link Slack unfurled', () => {
    const bare = {
      ...human,
      text: '',
      attachments: [{ is_share: true, text: 'the deploy is done', fallback: 'the deploy is done', author_name: 'Bob' }],
    };
    expect(toInbound(bare, context())?.text).toBe('> Bob: the deploy is done');
    const unfurl = {
      ...human,
      text: '<https://example.slack.com/archives/C0SALES/p1699990000000100>',
      attachments: [{ is_msg_unfurl: true, text: 'numbers are in', author_name: 'Bob', footer: 'Posted in #sales' }],
    };
    expect(toInbound(unfurl, context())?.text).toBe(
      'https://example.slack.com/archives/C0SALES/p1699990000000100\n> Bob: numbers are in',
    );
    // Other attachments (a bot's card, a link preview) are not shared messages.
    const card = { ...human, text: '', attachments: [{ text: 'CI passed', fallback: 'CI passed' }] };
    expect(toInbound(card, context())).toBeNull();
  });

  it("ignores Slackbot, also its notices in an app's DM", () => {
    const notice = {
      type: 'message',
      user: 'USLACKBOT',
      text: 'You have been removed from #ops by <@U0ALICE>',
      ts: '1700000006.000700',
      channel: 'D0DATA',
      event_ts: '1700000006.000700',
      channel_type: 'im',
      team: 'T0TEAM',
    };
    expect(toInbound(notice, context())).toBeNull();
    expect(userIdsToLearn(notice, apps)).toEqual([]);
    const response = { ...notice, subtype: 'slackbot_response', channel: 'C0GENERAL', channel_type: 'channel' };
    expect(toInbound(response, context())).toBeNull();
  });

  it("makes a human's reply in a thread an agent started address that agent", () => {
    const reply = {
      ...human,
      text: 'why that order?',
      ts: '1700000007.000800',
      thread_ts: '1700000002.000300',
      parent_user_id: 'U0CODE',
    };
    expect(toInbound(reply, context())).toMatchObject({
      channel: 'C0GENERAL/1700000002.000300',
      addressed: ['code'],
    });
    // A thread a human started, and an agent replying in an agent's thread, address no one.
    expect(toInbound({ ...reply, parent_user_id: 'U0ALICE' }, context())?.addressed).toBeUndefined();
    const byAgent = { ...reply, user: 'U0DATA', bot_id: 'B0DATA', app_id: 'A0DATA' };
    expect(toInbound(byAgent, context())?.addressed).toBeUndefined();
  });

  it('delivers a human edit (message_changed) as an edit of the message, in its room', () => {
    const changed = {
      type: 'message',
      subtype: 'message_changed',
      message: {
        client_msg_id: '7e1c6c2e-5d9b-4d6c-9f3e-3d2b1a0c9e8f',
        type: 'message',
        text: '<@U0CODE> <@U0DATA> can you look?',
        user: 'U0ALICE',
        team: 'T0TEAM',
        edited: { user: 'U0ALICE', ts: '1700000060.000000' },
        ts: '1700000000.000100',
        source_team: 'T0TEAM',
        user_team: 'T0TEAM',
      },
      channel: 'C0GENERAL',
      hidden: true,
      ts: '1700000060.000200',
      event_ts: '1700000060.000200',
      channel_type: 'channel',
      previous_message: { type: 'message', text: '<@U0CODE> can you look?', user: 'U0ALICE', ts: '1700000000.000100' },
    };
    expect(toInbound(changed, context())).toEqual({
      platform: 'slack',
      channel: 'C0GENERAL/1700000000.000100',
      messageId: '1700000000.000100:edit:1700000060.000000',
      author: { id: 'U0ALICE', name: 'Alice_Smith', kind: 'human' },
      text: '@code @data can you look?',
      edit: { of: '1700000000.000100', originalAt: 1_700_000_000_000 },
      at: 1_700_000_060_000,
    });
    expect(userIdsToLearn(changed, apps)).toEqual(['U0ALICE', 'U0CODE', 'U0DATA']);
    // A link unfurling is a change nobody made; our agents' edits are their streamed replies.
    const { edited: _edited, ...unfurled } = changed.message;
    expect(
      toInbound({ ...changed, message: { ...unfurled, attachments: [{ fallback: 'Example Domain' }] } }, context()),
    ).toBeNull();
    const streamed = { ...changed.message, user: 'U0CODE', bot_id: 'B0CODE', edited: { user: 'U0CODE', ts: '1.0' } };
    expect(toInbound({ ...changed, message: streamed }, context())).toBeNull();
  });

  it('keeps a thread parent that has replies in the room it was posted to', () => {
    const parent = { ...human, thread_ts: human.ts, reply_count: 2 };
    expect(toInbound(parent, context({ replyInThread: false }))?.channel).toBe('C0GENERAL');
  });

  it('hands over the files of a file_share, also without a comment, leaving out deleted ones', () => {
    const upload = {
      type: 'message',
      subtype: 'file_share',
      text: '',
      files: [
        {
          id: 'F0SALES',
          created: 1700000008,
          timestamp: 1700000008,
          name: 'sales.csv',
          title: 'sales.csv',
          mimetype: 'text/csv',
          filetype: 'csv',
          pretty_type: 'CSV',
          user: 'U0ALICE',
          user_team: 'T0TEAM',
          editable: true,
          size: 1234,
          mode: 'hosted',
          is_external: false,
          external_type: '',
          is_public: true,
          public_url_shared: false,
          display_as_bot: false,
          username: '',
          url_private: 'https://files.slack.com/files-pri/T0TEAM-F0SALES/sales.csv',
          url_private_download: 'https://files.slack.com/files-pri/T0TEAM-F0SALES/download/sales.csv',
          permalink: 'https://example.slack.com/files/U0ALICE/F0SALES/sales.csv',
          has_rich_preview: false,
          file_access: 'visible',
        },
        { id: 'F0GONE', mode: 'tombstone' },
      ],
      upload: false,
      user: 'U0ALICE',
      display_as_bot: false,
      ts: '1700000008.000900',
      channel: 'C0GENERAL',
      event_ts: '1700000008.000900',
      channel_type: 'channel',
    };
    const seen: string[] = [];
    const fileOf = (file: { id: string; name?: string; size?: number; url_private_download?: string }) => {
      seen.push(file.url_private_download ?? '');
      return { name: file.name ?? file.id, size: file.size ?? 0, download: async () => new Uint8Array() };
    };
    const inbound = toInbound(upload, context({ fileOf }));
    expect(inbound).toMatchObject({ text: '', files: [{ name: 'sales.csv', size: 1234 }] });
    expect(seen).toEqual(['https://files.slack.com/files-pri/T0TEAM-F0SALES/download/sales.csv']);
    // Without a way to fetch files, an upload without a comment says nothing.
    expect(toInbound(upload, context())).toBeNull();
  });
});
