import { describeError } from '../errors.js';
import type { Messaging, Tool, ToolContext, ToolResult } from './tool.js';

const text = (value: unknown) => (typeof value === 'string' ? value : '');
const names = (value: unknown): string[] =>
  Array.isArray(value)
    ? value
        .filter((v): v is string => typeof v === 'string')
        .map((v) => v.replace(/^@/, '').trim())
        .filter(Boolean)
    : [];

/** Runs a messaging action; a missing bridge or a thrown error becomes one clear line for the model. */
async function act(
  context: ToolContext,
  input: string,
  action: (messaging: Messaging) => Promise<string>,
  endTurn = false,
): Promise<ToolResult> {
  if (!context.messaging) return { input, output: '[ERROR: messaging is not available here]' };
  try {
    const output = await action(context.messaging);
    return { input, output, ...(endTurn && !output.startsWith('[ERROR') ? { endTurn: true } : {}) };
  } catch (error) {
    return { input, output: `[ERROR: ${describeError(error)}]` };
  }
}

const fn = (name: string, description: string, properties: Record<string, unknown>, required: string[]) => ({
  type: 'function' as const,
  function: { name, description, parameters: { type: 'object', properties, required } },
});

export const sendChannelMessageTool: Tool = {
  name: 'send_channel_message',
  definition: fn(
    'send_channel_message',
    'Post a message as yourself in a channel (this one, or another on the same platform: its id or #name). ' +
      'With request_reply, you are resumed once, when everyone named has answered there (or the deadline passed).',
    {
      channel: { type: 'string', description: 'Channel id, #name, or "here".' },
      message: { type: 'string' },
      request_reply: { type: 'array', items: { type: 'string' }, description: 'Agent or human names to wait for.' },
    },
    ['channel', 'message'],
  ),
  run(args, context) {
    const channel = text(args.channel);
    const message = text(args.message);
    if (!channel || !message)
      return Promise.resolve({ input: '', output: '[ERROR: "channel" and "message" are required]' });
    return act(context, `to ${channel}`, (m) =>
      m.sendChannelMessage({ channel, message, requestReply: names(args.request_reply) }),
    );
  },
};

export const sendDmTool: Tool = {
  name: 'send_dm',
  definition: fn(
    'send_dm',
    'Send a private message as yourself to a human. With request_reply: true you are resumed when they answer.',
    {
      to: { type: 'string', description: "The human's name as shown in the room (without @)." },
      message: { type: 'string' },
      request_reply: { type: 'boolean' },
    },
    ['to', 'message'],
  ),
  run(args, context) {
    const to = text(args.to).replace(/^@/, '');
    const message = text(args.message);
    if (!to || !message) return Promise.resolve({ input: '', output: '[ERROR: "to" and "message" are required]' });
    return act(context, `to @${to}`, (m) => m.sendDm({ to, message, requestReply: args.request_reply === true }));
  },
};

export const chatRequestTool: Tool = {
  name: 'chat_request',
  definition: fn(
    'chat_request',
    'Ask another agent for a private chat (only the two of you see it). They see the request at their next turn.',
    { to: { type: 'string' }, reason: { type: 'string' } },
    ['to', 'reason'],
  ),
  run(args, context) {
    const to = text(args.to).replace(/^@/, '');
    return act(context, `@${to}`, (m) => m.chatRequest({ to, reason: text(args.reason) }));
  },
};

export const chatResponseTool: Tool = {
  name: 'chat_response',
  definition: fn(
    'chat_response',
    'Accept or decline a pending private chat request addressed to you. Your turn continues.',
    { request_id: { type: 'integer' }, accept: { type: 'boolean' } },
    ['request_id', 'accept'],
  ),
  run(args, context) {
    const requestId = Number(args.request_id);
    return act(context, `#${String(args.request_id)}`, (m) =>
      m.chatResponse({ requestId, accept: args.accept === true }),
    );
  },
};

export const chatTool: Tool = {
  name: 'chat',
  definition: fn(
    'chat',
    'Send one private message to an agent you have an accepted chat with. This ends your turn.',
    { to: { type: 'string' }, message: { type: 'string' } },
    ['to', 'message'],
  ),
  run(args, context) {
    const to = text(args.to).replace(/^@/, '');
    return act(context, `@${to}`, (m) => m.chat({ to, message: text(args.message) }), true);
  },
};

export const messagingTools: readonly Tool[] = [
  sendChannelMessageTool,
  sendDmTool,
  chatRequestTool,
  chatResponseTool,
  chatTool,
];
