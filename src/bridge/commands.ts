import { metrics } from '../metrics.js';
import type { CommandEvent } from '../ports.js';
import { handBack } from '../room/index.js';
import { pendingParticipants } from '../room/threads.js';
import type { Bridge, Room } from './bridge.js';
import { PRIVATE_PLATFORM } from './messaging.js';

/**
 * `/pass [agent]`, `/reset [agent|workspace]`, `/status` (and the terminal room's `/clear`).
 * Limited to operators; each acts on the room it is issued in.
 */
export async function handleCommand(bridge: Bridge, event: CommandEvent): Promise<string> {
  if (!event.isOperator) return `Only operators can use /${event.name}.`;
  const room = bridge.room(event.platform, event.channel, event.direct?.agent);
  const arg = event.args.trim().replace(/^@/, '');
  const named = arg ? bridge.agent(arg) : undefined;
  if (arg && !named && !(event.name === 'reset' && arg === 'workspace')) {
    return `There is no agent named @${arg}. Agents: ${bridge.config.agents.map((a) => `@${a.name}`).join(', ')}.`;
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
      room.state.setTurnState(handBack('/pass'));
      metrics.handBacks.inc({ reason: '/pass' });
      bridge.closeThreads(room);
      return `Control is with the humans${stopped > 0 ? ` (${stopped} agent turn${stopped > 1 ? 's' : ''} stopped)` : ''}.`;
    }
    case 'reset': {
      if (named) {
        room.actor.stop(named.name);
        return `@${named.name}'s turn in this room was stopped.`;
      }
      room.actor.stop();
      bridge.closeThreads(room);
      room.state.setTurnState({ consecutive: 0, control: 'agents' }); // as a new room: nothing held back
      bridge.conductor.forgetPauses(room);
      const wipe = arg === 'workspace';
      await bridge.options.sandbox.reset?.(room.key, { wipeWorkspace: wipe });
      return wipe
        ? 'Room reset: turns stopped, counter cleared, sandbox and workspace removed.'
        : 'Room reset: turns stopped, counter cleared, sandbox removed (workspace kept).';
    }
    case 'clear': {
      room.actor.stop();
      bridge.closeThreads(room);
      room.state.clear();
      room.state.setTurnState({ consecutive: 0, control: 'agents' });
      return 'History of this room cleared.';
    }
    case 'status':
      return statusText(bridge, room);
  }
}

async function statusText(bridge: Bridge, room: Room): Promise<string> {
  const key = room.key;
  const state = room.state.turnState;
  const working = [...room.actor.inFlight.keys()].map((n) => `@${n}`);
  const lines = [
    `Room ${key}`,
    `Working: ${working.length > 0 ? working.join(', ') : 'nobody'}`,
    `Agent messages in a row: ${state.consecutive} of ${bridge.config.settings.TURN_LIMIT}`,
    `Control: ${state.control}${state.control === 'humans' && state.reason ? ` (${state.reason})` : ''}`,
    `Agents: ${bridge.config.agents.map((a) => `@${a.name} (${a.activation})`).join(', ')}`,
  ];
  const threads = bridge.threadsOf(room);
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
  lines.push(...privateChatLines(bridge));
  const sandbox = await bridge.options.sandbox.describe?.(key).catch((error: unknown) => `unknown (${String(error)})`);
  if (sandbox) lines.push(`Sandbox: ${sandbox.replace(/^sandbox:\s*/i, '')}`);
  return lines.join('\n');
}

/** Operators see private agent chats: each pair's message count and last message time, and pending requests. */
function privateChatLines(bridge: Bridge): string[] {
  const store = bridge.options.store;
  const lines: string[] = [];
  for (const channel of store.channels().filter((c) => c.platform === PRIVATE_PLATFORM)) {
    const history = store.history(channel.id, 1000);
    const last = history.at(-1);
    if (!last) continue;
    const pair = channel.channel
      .split('+')
      .map((name) => `@${bridge.agent(name)?.name ?? name}`)
      .join(' + ');
    lines.push(
      `Private chats: ${pair}: ${history.length} messages, last at ${new Date(last.at).toISOString().slice(11, 19)} UTC`,
    );
  }
  const pending = bridge.config.agents.flatMap((agent) =>
    store.chats
      .involving(agent.name)
      .filter((r) => r.status === 'pending' && r.expiresAt > bridge.clock() && r.from === agent.name),
  );
  for (const r of pending) lines.push(`Chat request #${r.id}: @${r.from} -> @${r.to} (pending): ${r.reason}`);
  return lines;
}
