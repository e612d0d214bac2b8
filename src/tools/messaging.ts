import { z } from 'zod';
import { describeError } from '../errors.js';
import {
  ActionRefused,
  defineTool,
  failed,
  type Messaging,
  ok,
  refused,
  type Tool,
  type ToolContext,
  type ToolResult,
} from './tool.js';

/** Runs a messaging action: a refusal or a failure becomes one clear line for the model. */
async function act(
  context: ToolContext,
  input: string,
  action: (messaging: Messaging) => Promise<string>,
  endTurn = false,
): Promise<ToolResult> {
  if (!context.messaging) return refused(input, 'messaging is not available here');
  try {
    return ok(input, await action(context.messaging), endTurn ? { endTurn } : {});
  } catch (error) {
    context.signal.throwIfAborted();
    return error instanceof ActionRefused ? refused(input, error.message) : failed(input, describeError(error));
  }
}

const name = z.string().transform((value) => value.replace(/^@/, '').trim());
const required = (what: string) =>
  z.string({ error: `"${what}" is required` }).min(1, { error: `"${what}" is required` });

export const sendChannelMessageTool = defineTool({
  name: 'send_channel_message',
  description:
    'Post a message as yourself in a channel (this one, or another on the same platform: its id or #name). ' +
    'With request_reply, you are resumed once, when everyone named has answered there (or the deadline passed).',
  schema: z.object({
    channel: required('channel').describe('Channel id, #name, or "here".'),
    message: required('message'),
    request_reply: z
      .array(z.string())
      .optional()
      .describe('Agent or human names to wait for.')
      .transform((names) => (names ?? []).map((n) => n.replace(/^@/, '').trim()).filter(Boolean)),
  }),
  run({ channel, message, request_reply }, context) {
    return act(context, `to ${channel}`, (m) =>
      m.sendChannelMessage({ channel, message, requestReply: request_reply }),
    );
  },
});

export const sendDmTool = defineTool({
  name: 'send_dm',
  description:
    'Send a private message as yourself to a human. With request_reply: true you are resumed when they answer.',
  schema: z.object({
    to: required('to')
      .describe("The human's name as shown in the room (without @).")
      .transform((value) => value.replace(/^@/, '')),
    message: required('message'),
    request_reply: z.boolean().optional(),
  }),
  run({ to, message, request_reply }, context) {
    return act(context, `to @${to}`, (m) => m.sendDm({ to, message, requestReply: request_reply === true }));
  },
});

export const chatRequestTool = defineTool({
  name: 'chat_request',
  description:
    'Ask another agent for a private chat (only the two of you see it). They are asked to accept or decline at once.',
  schema: z.object({ to: name, reason: z.string().default('') }),
  run({ to, reason }, context) {
    return act(context, `@${to}`, (m) => m.chatRequest({ to, reason }));
  },
});

export const chatResponseTool = defineTool({
  name: 'chat_response',
  description: 'Accept or decline a pending private chat request addressed to you. Your turn continues.',
  schema: z.object({ request_id: z.coerce.number(), accept: z.boolean() }),
  inputOf: (args) => `#${String((args as { request_id?: unknown } | null)?.request_id)}`,
  run({ request_id, accept }, context) {
    return act(context, `#${request_id}`, (m) => m.chatResponse({ requestId: request_id, accept }));
  },
});

export const chatTool = defineTool({
  name: 'chat',
  description: 'Send one private message to an agent you have an accepted chat with. This ends your turn.',
  schema: z.object({ to: name, message: z.string().default('') }),
  run({ to, message }, context) {
    return act(context, `@${to}`, (m) => m.chat({ to, message }), true);
  },
});

export const lookTool = defineTool({
  name: 'look',
  description:
    'See who is at the table: the other agents, the humans recently active in this room, and pending private chat requests.',
  schema: z.object({}),
  run(_args, context) {
    return act(context, 'look', (m) => m.look());
  },
});

export const messagingTools: readonly Tool[] = [
  sendChannelMessageTool,
  sendDmTool,
  chatRequestTool,
  chatResponseTool,
  chatTool,
  lookTool,
];
