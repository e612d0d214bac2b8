/**
 * Operator slash commands (`/pass [agent]`, `/reset [agent]`, `/status`, `/privacy [mode]`, `/budget [limit]`, `/access`,
 * `/pair [code]`): their definitions for registration,
 * and the handling of an interaction on the control identity. Who may use them is decided here (OPERATORS or
 * Manage Channels); what they do is the bridge's business.
 */
import {
  type ChatInputCommandInteraction,
  DiscordAPIError,
  HTTPError,
  MessageFlags,
  PermissionFlagsBits,
  type REST,
  type RESTPutAPIApplicationCommandsJSONBody,
  type RepliableInteraction,
  Routes,
} from 'discord.js';
import { AdapterError } from '../../src/errors.js';
import { type AdapterSink, type CommandEvent, type CommandName, ROOM_COMMANDS } from '../../src/ports.js';
import { splitMessage } from '../shared/split.js';
import { DISCORD_MESSAGE_LIMIT, PLATFORM } from './inbound.js';

/** Discord accepts an interaction's answer only within 3 s; a slower command is deferred, then its reply edited in. */
export const DEFER_AFTER_MS = 2000;

/** The command list `npm run discord:commands` registers (agent names offered as choices, at most 25). */
export function commandDefinitions(agentNames: readonly string[]): RESTPutAPIApplicationCommandsJSONBody {
  const choices = agentNames.slice(0, 24).map((name) => ({ name, value: name }));
  return [
    {
      name: 'pass',
      description: 'Stop the agents here (or one agent) and hand control back to the humans',
      options: [{ type: 3, name: 'agent', description: 'Only stop this agent', required: false, choices }],
    },
    {
      name: 'reset',
      description: 'Reset this room: stop turns, clear the counter, remove the sandbox',
      options: [
        {
          type: 3,
          name: 'agent',
          description: "Only stop this agent's turn, or 'workspace' to wipe the files too",
          required: false,
          choices: [...choices, { name: 'workspace', value: 'workspace' }],
        },
      ],
    },
    { name: 'status', description: 'Who is working, the turn counter, the sandbox' },
    {
      name: 'privacy',
      description: 'Show or set what agents see here: mentions (only their exchanges) or off (everything)',
      options: [
        {
          type: 3,
          name: 'mode',
          description: 'mentions or off; leave out to show the current mode',
          required: false,
          choices: [
            { name: 'mentions', value: 'mentions' },
            { name: 'off', value: 'off' },
          ],
        },
      ],
    },
    {
      name: 'budget',
      description: "Show today's spend against the spending limits, or set one (bridge 20, room 5, agent data 2)",
      options: [
        {
          type: 3,
          name: 'limit',
          description: 'bridge <dollars>, room <dollars> or agent <name> <dollars> (off: none; default: as configured)',
          required: false,
        },
      ],
    },
    { name: 'access', description: 'Show who may make the agents act here' },
    {
      name: 'pair',
      description: "Approve a person's DM pairing code, list the codes waiting, or end a pairing",
      options: [
        {
          type: 3,
          name: 'code',
          description: 'the code the person was given; list; or revoke <name or id>',
          required: false,
        },
      ],
    },
    ...(['approve', 'deny'] as const).map((name) => ({
      name,
      description: `${name === 'approve' ? 'Approve' : 'Deny'} an agent's action waiting on its card (yours, or any as an operator)`,
      options: [{ type: 3, name: 'id', description: "the card's id, such as A3", required: false }],
    })),
  ];
}

export interface CommandContext {
  readonly sink: AdapterSink;
  readonly operators: ReadonlySet<string>;
  /** The control identity's agent: a command in its DM acts on that private room. */
  readonly controlAgent: string;
  /** How long to wait for the bridge's answer before deferring (default DEFER_AFTER_MS). */
  readonly deferAfterMs?: number | undefined;
  /**
   * The interaction's `channel_id` as sent, for an interaction without a `channel` object (discord.js reads the
   * channel from that object only).
   */
  readonly sentChannel?: ((interactionId: string) => string | undefined) | undefined;
}

/**
 * discord.js reads an interaction's channel from its `channel` object only; some interactions come with just
 * `channel_id`. This keeps that id from the raw gateway event, which comes first, until the handler takes it.
 */
export class SentChannels {
  private readonly byInteraction = new Map<string, string>();

  /** Notes an INTERACTION_CREATE's `channel_id` (other gateway events are ignored). */
  note(packet: { t?: string; d?: unknown }): void {
    const data = packet.d as { id?: string; channel_id?: string } | undefined;
    if (packet.t !== 'INTERACTION_CREATE' || !data?.id || !data.channel_id) return;
    this.byInteraction.set(data.id, data.channel_id);
    // Only the newest few are ever needed: each is taken right after its event.
    if (this.byInteraction.size > 100) {
      const oldest = this.byInteraction.keys().next().value;
      if (oldest !== undefined) this.byInteraction.delete(oldest);
    }
  }

  take(interactionId: string): string | undefined {
    const channel = this.byInteraction.get(interactionId);
    this.byInteraction.delete(interactionId);
    return channel;
  }
}

/** Said when Discord does not tell which room a command was used in. */
export const NO_ROOM = 'Discord did not say where this command was used: try it again in the channel or DM.';

export function isCommandName(name: string): name is CommandName {
  return (ROOM_COMMANDS as readonly string[]).includes(name);
}

/** Runs one slash command and answers it ephemerally. */
export async function answerCommand(interaction: ChatInputCommandInteraction, context: CommandContext): Promise<void> {
  const name = interaction.commandName;
  if (!isCommandName(name)) return;
  const isOperator =
    context.operators.has(interaction.user.id) ||
    interaction.memberPermissions?.has(PermissionFlagsBits.ManageChannels) === true;
  const channel = interaction.channelId ?? context.sentChannel?.(interaction.id);
  if (!channel) {
    await interaction.reply({ content: NO_ROOM, flags: MessageFlags.Ephemeral });
    return;
  }
  const event: CommandEvent = {
    platform: PLATFORM,
    channel,
    name,
    args:
      (
        interaction.options.getString('agent') ??
        interaction.options.getString('mode') ??
        interaction.options.getString('limit') ??
        interaction.options.getString('code') ??
        interaction.options.getString('id')
      )?.trim() ?? '',
    user: {
      id: interaction.user.id,
      name: interaction.member ? interaction.user.displayName : interaction.user.username,
    },
    isOperator,
    ...(interaction.guildId ? {} : { direct: { agent: context.controlAgent } }),
    id: interaction.id,
    // Another bridge can answer through the interaction's webhook (for 15 minutes) should this one be gone.
    reply: JSON.stringify({ application: interaction.applicationId, token: interaction.token }),
  };
  await respond(interaction, context.sink.command(event), context.deferAfterMs);
}

/**
 * Answers an interaction ephemerally with the bridge's answer to its command: at once when it comes within
 * `deferAfterMs`, else deferred and edited in; nothing when another bridge claimed the command (it answers).
 */
export async function respond(
  interaction: RepliableInteraction,
  answer: Promise<string | undefined>,
  deferAfterMs = DEFER_AFTER_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<'slow'>((resolve) => {
    timer = setTimeout(() => resolve('slow'), deferAfterMs);
  });
  const first = await Promise.race([answer, slow]);
  clearTimeout(timer);
  // Another bridge sharing the store claimed this interaction (every bridge's session may receive it): it answers.
  if (first === undefined) return;
  let parts: string[];
  if (first !== 'slow') {
    parts = chunks(first);
    await interaction.reply({ content: parts[0] ?? 'Done.', flags: MessageFlags.Ephemeral });
  } else {
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const later = await answer;
    if (later === undefined) {
      await interaction.deleteReply();
      return;
    }
    parts = chunks(later);
    await interaction.editReply({ content: parts[0] ?? 'Done.' });
  }
  // A long answer (a /status with many agents) is split, never cut: the rest as ephemeral follow-ups.
  for (const part of parts.slice(1)) await interaction.followUp({ content: part, flags: MessageFlags.Ephemeral });
}

/**
 * Answers an interaction another bridge deferred, through its webhook (`reply`: its application id and token, valid
 * 15 minutes from any process): the deferred reply edited in, the rest as ephemeral follow-ups. An error names the
 * status only, never the token.
 */
export async function answerByRoute(rest: REST, reply: string, text: string): Promise<void> {
  const { application, token } = JSON.parse(reply) as { application: string; token: string };
  const [first = 'Done.', ...more] = chunks(text);
  try {
    await rest.patch(Routes.webhookMessage(application, token, '@original'), { body: { content: first }, auth: false });
    for (const part of more) {
      await rest.post(Routes.webhook(application, token), {
        body: { content: part, flags: MessageFlags.Ephemeral },
        auth: false,
      });
    }
  } catch (error) {
    const status = error instanceof DiscordAPIError || error instanceof HTTPError ? ` (${error.status})` : '';
    throw new AdapterError(PLATFORM, `the interaction could not be answered through its webhook${status}`);
  }
}

function chunks(text: string): string[] {
  return splitMessage(text.trim() || 'Done.', DISCORD_MESSAGE_LIMIT);
}
