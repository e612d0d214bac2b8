import type { AgentConfig } from '../config/index.js';
import { usageLines } from '../llm/usage-report.js';
import { metrics } from '../metrics.js';
import type { CommandEvent, Sandbox } from '../ports.js';
import { pendingParticipants, type Thread } from '../room/threads.js';
import { handBack } from '../room/turns.js';
import type { ChatStore, Store } from '../store/index.js';
import { PRIVATE_PLATFORM } from './private-rooms.js';
import type { Room, Rooms } from './rooms.js';

/** What the operator commands act on. */
export interface CommandDeps {
  readonly agents: readonly AgentConfig[];
  readonly turnLimit: number;
  readonly rooms: Rooms;
  readonly store: Pick<Store, 'channels' | 'history' | 'usage'> & { readonly chats: ChatStore };
  readonly sandbox: Sandbox;
  readonly clock: () => number;
  /** The room's requests, for /status. */
  readonly threadsOf: (room: Room) => Thread[];
  /** Closes the room's requests (requesters waiting elsewhere resume). */
  readonly closeRequests: (room: Room) => void;
  /** The room starts afresh (loop guards forgotten). */
  readonly forgetGuards: (room: Room) => void;
}

const PRIVACY_MODES = ['mentions', 'off'] as const;

/**
 * `/pass [agent]`, `/reset [agent|workspace]`, `/status`, `/privacy [mentions|off]` (and the terminal
 * room's `/clear`). Limited to operators; each acts on the room it is issued in.
 */
export async function handleCommand(deps: CommandDeps, event: CommandEvent): Promise<string> {
  if (!event.isOperator) return `Only operators can use /${event.name}.`;
  const room = deps.rooms.get(event.platform, event.channel, event.direct?.agent);
  const arg = event.args.trim().replace(/^@/, '');
  if (event.name === 'privacy') return privacy(room, arg);
  const named = arg ? deps.agents.find((a) => a.name.toLowerCase() === arg.toLowerCase()) : undefined;
  if (arg && !named && !(event.name === 'reset' && arg === 'workspace')) {
    return `There is no agent named @${arg}. Agents: ${deps.agents.map((a) => `@${a.name}`).join(', ')}.`;
  }

  switch (event.name) {
    case 'pass': {
      if (named) {
        const stopped = room.actor.stop(named.name);
        return stopped > 0
          ? `@${named.name} was stopped; the next agent may answer.`
          : `@${named.name} is not working.`;
      }
      const stopped = room.actor.stop();
      metrics.handBacks.inc({ reason: '/pass' });
      room.state.setTurnState(handBack('/pass'));
      deps.closeRequests(room);
      return `Control is with the humans${stopped > 0 ? ` (${stopped} agent turn${stopped > 1 ? 's' : ''} stopped)` : ''}.`;
    }
    case 'reset': {
      if (named) {
        room.actor.stop(named.name);
        return `@${named.name}'s turn in this room was stopped.`;
      }
      room.actor.stop();
      deps.closeRequests(room);
      room.state.setTurnState({ consecutive: 0, control: 'agents' }); // as a new room: nothing held back
      deps.forgetGuards(room);
      const wipe = arg === 'workspace';
      await deps.sandbox.reset?.(room.key, { wipeWorkspace: wipe });
      return wipe
        ? 'Room reset: turns stopped, counter cleared, sandbox and workspace removed.'
        : 'Room reset: turns stopped, counter cleared, sandbox removed (workspace kept).';
    }
    case 'clear': {
      room.actor.stop();
      deps.closeRequests(room);
      room.state.clear();
      room.state.setTurnState({ consecutive: 0, control: 'agents' });
      return 'History of this room cleared.';
    }
    case 'status':
      return statusText(deps, room);
  }
}

/** `/privacy` shows the room's mode; `/privacy mentions|off` sets it (stored: it wins over PRIVACY). */
function privacy(room: Room, arg: string): string {
  const mode = arg.toLowerCase();
  if (!mode) return `Privacy in this room: ${room.state.privacy}.`;
  if (!PRIVACY_MODES.includes(mode as (typeof PRIVACY_MODES)[number])) {
    return `Use /privacy mentions (agents see only the exchanges they are part of) or /privacy off.`;
  }
  room.state.setPrivacy(mode as (typeof PRIVACY_MODES)[number]);
  return mode === 'mentions'
    ? 'Privacy in this room: mentions. A message that mentions agents, and the replies to it, are shown only to its participants.'
    : 'Privacy in this room: off. Every agent sees every message.';
}

async function statusText(deps: CommandDeps, room: Room): Promise<string> {
  const state = room.state.turnState;
  const working = [...room.actor.inFlight.keys()].map((n) => `@${n}`);
  const lines = [
    `Room ${room.key}`,
    `Working: ${working.length > 0 ? working.join(', ') : 'nobody'}`,
    `Agent messages in a row: ${state.consecutive} of ${deps.turnLimit}`,
    `Control: ${state.control}${state.control === 'humans' && state.reason ? ` (${state.reason})` : ''}`,
    `Privacy: ${room.state.privacy}`,
    `Agents: ${deps.agents.map((a) => `@${a.name} (${a.activation})`).join(', ')}`,
  ];
  const threads = deps.threadsOf(room);
  if (threads.length === 0) lines.push('Open requests: none');
  for (const thread of threads) {
    const waiting = pendingParticipants(thread).map((p) => `@${p.name}`);
    const since = new Date(thread.openedAt).toISOString().slice(11, 19);
    const what =
      thread.status === 'open'
        ? `waits for ${waiting.join(', ')} (answered: ${thread.answers.length} of ${thread.awaited.length})`
        : `${thread.status}, resuming`;
    lines.push(`Request #${thread.id}: @${thread.requester} ${what}, since ${since} UTC`);
  }
  lines.push(...usageLines(deps.store.usage, deps.agents, room.key));
  lines.push(...privateChatLines(deps));
  const sandbox = await deps.sandbox.describe?.(room.key).catch((error: unknown) => `unknown (${String(error)})`);
  if (sandbox) lines.push(`Sandbox: ${sandbox.replace(/^sandbox:\s*/i, '')}`);
  return lines.join('\n');
}

/** Operators see private agent chats: each pair's message count and last message time, and pending requests. */
function privateChatLines(deps: CommandDeps): string[] {
  const lines: string[] = [];
  const spell = (name: string) => deps.agents.find((a) => a.name.toLowerCase() === name.toLowerCase())?.name ?? name;
  for (const channel of deps.store.channels().filter((c) => c.platform === PRIVATE_PLATFORM)) {
    const history = deps.store.history(channel.id, 1000);
    const last = history.at(-1);
    if (!last) continue;
    const pair = channel.channel
      .split('+')
      .map((name) => `@${spell(name)}`)
      .join(' + ');
    lines.push(
      `Private chats: ${pair}: ${history.length} messages, last at ${new Date(last.at).toISOString().slice(11, 19)} UTC`,
    );
  }
  const now = deps.clock();
  const pending = deps.agents.flatMap((agent) =>
    deps.store.chats
      .involving(agent.name)
      .filter((r) => r.status === 'pending' && r.expiresAt > now && r.from === agent.name),
  );
  for (const r of pending) lines.push(`Chat request #${r.id}: @${r.from} -> @${r.to} (pending): ${r.reason}`);
  return lines;
}
