/**
 * Approval cards' buttons (rule 17): a card is posted with one action row — Approve (success) and Deny (danger) —
 * whose custom_ids name the command and the card (`rt:approve:A1`). A click is that command, given by the person who
 * clicked, in the room of the message clicked, and answered ephemerally. Whether that person may answer the card is
 * the room's decision, as for a typed /approve; here only what cannot be a person's click is refused.
 */
import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type ButtonInteraction,
  ButtonStyle,
  type Client,
  ComponentType,
  Events,
  MessageFlags,
  PermissionFlagsBits,
} from 'discord.js';
import type { Logger } from '../../src/log.js';
import type { AdapterSink, CommandEvent, PostButton } from '../../src/ports.js';
import { respond } from './commands.js';
import { PLATFORM } from './inbound.js';

/** `rt:approve:A1`, `rt:deny:A1`: what a button of a card says when clicked. */
const CUSTOM_ID = /^rt:(approve|deny):([A-Za-z0-9]{1,20})$/;

/** The action row a card is posted with; undefined without buttons. */
export function componentsOf(
  buttons: readonly PostButton[] | undefined,
): APIActionRowComponent<APIButtonComponent>[] | undefined {
  if (!buttons || buttons.length === 0) return undefined;
  return [
    {
      type: ComponentType.ActionRow,
      // Discord takes at most five buttons in a row.
      components: buttons.slice(0, 5).map((button) => ({
        type: ComponentType.Button,
        style: button.action === 'approve' ? ButtonStyle.Success : ButtonStyle.Danger,
        label: `${button.action === 'approve' ? 'Approve' : 'Deny'} ${button.card}`,
        custom_id: `rt:${button.action}:${button.card}`,
      })),
    },
  ];
}

export interface ButtonContext {
  /** The bridge; undefined while the adapter is not started. */
  readonly sink: () => AdapterSink | undefined;
  readonly operators: ReadonlySet<string>;
  /** Milliseconds before a slow answer is deferred (default DEFER_AFTER_MS). */
  readonly deferMs?: number | undefined;
  readonly log: Logger;
}

/** Said to a bot's click (Discord lets no bot click, but a payload is checked, not trusted). */
export const NO_BOTS = 'Bots cannot answer approval cards.';

/**
 * A click on a card's button: the command it names, in the room of the message clicked. `agent`: the agent whose bot
 * received it (a card in a DM is that DM's bot's: the private room is its).
 */
export async function answerButton(
  interaction: ButtonInteraction,
  agent: string,
  sink: AdapterSink,
  context: ButtonContext,
): Promise<void> {
  const refuse = async (content: string) => {
    await interaction.reply({ content, flags: MessageFlags.Ephemeral });
  };
  const named = CUSTOM_ID.exec(interaction.customId);
  if (!named) return refuse('This button is not one of the bridge’s.');
  if (interaction.user.bot) return refuse(NO_BOTS);
  const message = interaction.message;
  // Only a card this bot posted has the bridge's buttons; a human's look-alike text has none.
  if (message.author.id !== interaction.client.user.id) return refuse('That message is not an approval card.');
  const channel = message.channelId;
  if (interaction.channelId && interaction.channelId !== channel) {
    return refuse('That button is not on a message of this channel.');
  }
  const event: CommandEvent = {
    platform: PLATFORM,
    channel,
    name: named[1] === 'approve' ? 'approve' : 'deny',
    args: named[2] ?? '',
    user: {
      id: interaction.user.id,
      name: interaction.member ? interaction.user.displayName : interaction.user.username,
    },
    isOperator:
      context.operators.has(interaction.user.id) ||
      interaction.memberPermissions?.has(PermissionFlagsBits.ManageChannels) === true,
    ...(interaction.guildId ? {} : { direct: { agent } }),
    id: interaction.id,
    reply: JSON.stringify({ application: interaction.applicationId, token: interaction.token }),
  };
  await respond(interaction, sink.command(event), context.deferMs);
}

/** Answers the clicks on the cards of one agent's bot: Discord sends a click to the bot whose message it is. */
export function listenForClicks(client: Client, agent: string, context: ButtonContext): void {
  client.on(Events.InteractionCreate, (interaction) => {
    const sink = context.sink();
    if (!interaction.isButton() || !sink) return;
    answerButton(interaction, agent, sink, context).catch((error: unknown) =>
      context.log.warn({ err: error, button: interaction.customId }, 'a button click could not be answered'),
    );
  });
}
