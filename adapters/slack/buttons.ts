/**
 * Approval cards' buttons on Slack (rule 17): a card is posted with Block Kit — its text in sections, then an actions
 * block with Approve (primary) and Deny (danger), action_id `rt_approve` / `rt_deny`, value the card's id. A click
 * reaches the app whose message it is as a `block_actions` payload; it is that command, by the person who clicked, in
 * the room of the message clicked (a thread is `channel/thread_ts`). Whether that person may answer the card is the
 * room's decision, as for a typed /approve; here only what cannot be a click on this app's card is refused.
 */
import type { types } from '@slack/bolt';
import type { CommandEvent, PostButton } from '../../src/ports.js';
import { splitMessage } from '../shared/split.js';
import { SLACK } from './inbound.js';
import { roomId } from './rooms.js';

/** The action_ids of a card's buttons. */
export const CARD_ACTION = /^rt_(approve|deny)$/;

/** Slack shows at most 3000 characters of a section's text. */
const SECTION_LIMIT = 3000;

/** A card's blocks: its text (mrkdwn, as posted) in sections, then its buttons. */
export function cardBlocks(text: string, buttons: readonly PostButton[]): types.KnownBlock[] {
  const sections: types.KnownBlock[] = splitMessage(text, SECTION_LIMIT).map((part) => ({
    type: 'section',
    text: { type: 'mrkdwn', text: part },
  }));
  const first = buttons[0]?.card ?? 'card';
  return [
    ...sections,
    {
      type: 'actions',
      block_id: `rt_card_${first}`,
      elements: buttons.map((button) => ({
        type: 'button',
        action_id: `rt_${button.action}`,
        text: { type: 'plain_text', text: `${button.action === 'approve' ? 'Approve' : 'Deny'} ${button.card}` },
        style: button.action === 'approve' ? 'primary' : 'danger',
        value: button.card,
      })),
    },
  ];
}

/** The parts of a `block_actions` payload a card's click is read from. */
export interface CardClick {
  readonly user?: { readonly id?: string; readonly username?: string; readonly name?: string };
  readonly channel?: { readonly id?: string };
  readonly container?: { readonly channel_id?: string; readonly thread_ts?: string; readonly is_ephemeral?: boolean };
  readonly message?: { readonly ts?: string; readonly thread_ts?: string; readonly bot_id?: string };
  readonly actions?: ReadonlyArray<{ readonly action_id?: string; readonly value?: string }>;
  readonly trigger_id?: string;
  readonly response_url?: string;
}

export interface ClickContext {
  /** The bot id of the app that received the click (Slack sends it to the app whose message it is). */
  readonly botId: string;
  readonly operators: ReadonlySet<string>;
  /** The agent whose app a DM conversation belongs to. */
  readonly dmOwner: (channel: string) => string | undefined;
}

/** The command a click on a card gives, or why it gives none (a line for the clicker). */
export function clickCommand(click: CardClick, context: ClickContext): CommandEvent | string {
  const action = click.actions?.[0];
  const name = CARD_ACTION.exec(action?.action_id ?? '')?.[1];
  const user = click.user?.id;
  const channel = click.container?.channel_id;
  if (!name || !action?.value || !user || !channel) return 'That button could not be read.';
  // Only a card this app posted has the bridge's buttons; a human's look-alike text has none.
  if (click.message?.bot_id !== context.botId || click.container?.is_ephemeral) {
    return 'That message is not an approval card.';
  }
  if (click.channel?.id && click.channel.id !== channel) return 'That button is not on a message of this channel.';
  // A card in a thread is in the thread's room; a card that is itself a thread's parent is in the channel's.
  const thread = click.container?.thread_ts ?? click.message?.thread_ts;
  const room = roomId(channel, thread && thread !== click.message?.ts ? thread : undefined);
  const owner = context.dmOwner(channel);
  return {
    platform: SLACK,
    channel: room,
    name: name === 'approve' ? 'approve' : 'deny',
    args: action.value,
    user: { id: user, name: click.user?.username ?? click.user?.name ?? user },
    isOperator: context.operators.has(user),
    ...(owner ? { direct: { agent: owner } } : {}),
    ...(click.trigger_id ? { id: click.trigger_id } : {}),
    ...(click.response_url ? { reply: click.response_url } : {}),
  };
}
