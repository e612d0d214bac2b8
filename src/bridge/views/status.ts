/**
 * `/status`: the room as it is — who works, the count, control, privacy, posts waiting for another try, requests,
 * tokens, private chats, sandbox.
 */
import type { AgentConfig } from '../../config/index.js';
import { usageLines } from '../../llm/usage-report.js';
import type { Sandbox } from '../../ports.js';
import { pending } from '../../room/requests.js';
import type { SpendMeter } from '../../spend/meter.js';
import type { ReplicaRecord, StorePort } from '../../store/port.js';
import type { WaitingPost } from '../executors/poster.js';
import { PRIVATE_PLATFORM } from '../executors/private-rooms.js';
import type { RoomActor } from '../loop/room-actor.js';
import { spendLines } from './budget.js';

export interface StatusDeps {
  readonly agents: readonly AgentConfig[];
  readonly store: Pick<StorePort, 'rooms' | 'usage' | 'chats'>;
  readonly sandbox: Pick<Sandbox, 'describe'>;
  /** The day's spend against the spending limits. */
  readonly spend?: Pick<SpendMeter, 'lines' | 'limited'> | undefined;
  /** The agents with a turn under way in a room. */
  readonly working: (room: string) => string[];
  /** The room's posts that failed and wait for another try. */
  readonly waiting: (room: string) => WaitingPost[];
  readonly clock: () => number;
  /** REPLICA_ID, with bridges sharing the store (the one answering serves the room). */
  readonly replica?: string | undefined;
  /** With bridges sharing the store: the live replicas, and the rooms each holds. */
  readonly replicas?: (() => Promise<LiveReplicas>) | undefined;
  /** Who may make the agents act in a room of this platform (`/access`'s lines); undefined where none is read. */
  readonly access?: ((platform: string) => string | undefined) | undefined;
  /** The room's MCP servers, a line each (src/mcp/pool.ts). */
  readonly mcp?: ((room: string) => string[]) | undefined;
}

export interface LiveReplicas {
  readonly live: readonly ReplicaRecord[];
  /** Rooms held now, by replica. */
  readonly rooms: ReadonlyMap<string, number>;
}

/** One line: each live replica, its host and how many rooms it holds. */
export function replicasLine({ live, rooms }: LiveReplicas): string {
  const each = live.map((r) => {
    const held = rooms.get(r.id) ?? 0;
    return `${r.id} on ${r.host} (${held} room${held === 1 ? '' : 's'})`;
  });
  return `Replicas live: ${each.length > 0 ? each.join(', ') : 'none'}`;
}

const time = (ms: number) => new Date(ms).toISOString().slice(11, 19);

export async function statusText(deps: StatusDeps, actor: RoomActor): Promise<string> {
  const { state, setup } = actor;
  const working = deps.working(actor.key).map((n) => `@${n}`);
  const lines = [
    `Room ${actor.key}`,
    ...(deps.replica !== undefined ? [`Served by: replica ${deps.replica}`] : []),
    ...(deps.replicas
      ? [await deps.replicas().then(replicasLine, (error: unknown) => `Replicas live: unknown (${String(error)})`)]
      : []),
    `Working: ${working.length > 0 ? working.join(', ') : 'nobody'}`,
    `Agent messages in a row: ${state.control.count} of ${setup.turnLimit}`,
    `Control: ${state.control.holder}${state.control.holder === 'humans' && state.control.reason ? ` (${state.control.reason})` : ''}`,
    `Privacy: ${state.privacy ?? setup.privacy}`,
    `Agents: ${deps.agents.map((a) => `@${a.name} (${a.activation})`).join(', ')}`,
    ...accessLine(deps.access?.(actor.record.platform)),
    ...(state.approvals ?? []).map(
      (a) =>
        `Approval ${a.id}: @${a.agent}'s ${a.tool} ${a.status === 'approved' ? 'approved, about to run' : `waits for ${a.root && !a.operatorsOnly ? `@${a.root.name} or an operator` : 'an operator'} until ${time(a.expiresAt)} UTC`}`,
    ),
    ...deps.waiting(actor.key).map(waitingLine),
  ];
  const requests = (await deps.store.rooms.requests(actor.key)).filter(
    (r) => r.status === 'open' || r.status === 'answered' || r.status === 'expired',
  );
  if (requests.length === 0) lines.push('Open requests: none');
  for (const request of requests) {
    const waiting = pending(request).map((p) => `@${p.name}`);
    const what =
      request.status === 'open'
        ? `waits for ${waiting.join(', ')} (answered: ${request.answers.length} of ${request.awaited.length})`
        : `${request.status}, resuming`;
    lines.push(`Request #${request.id}: @${request.requester} ${what}, since ${time(request.openedAt)} UTC`);
  }
  const [room, total] = await Promise.all([deps.store.usage.inRoom(actor.key), deps.store.usage.total()]);
  lines.push(...usageLines({ room, total }, deps.agents));
  if (deps.spend?.limited) lines.push('Spending today:', ...spendLines(await deps.spend.lines(actor.key)));
  lines.push(...(await privateChatLines(deps)));
  const sandbox = await deps.sandbox.describe?.(actor.key).catch((error: unknown) => `unknown (${String(error)})`);
  if (sandbox) lines.push(`Sandbox: ${sandbox.replace(/^sandbox:\s*/i, '')}`);
  lines.push(...(deps.mcp?.(actor.key) ?? []));
  return lines.join('\n');
}

function accessLine(text: string | undefined): string[] {
  return text ? [`Access: ${text.replace(/\n/g, ' ')}`] : [];
}

/** A post the platform failed, tried again until it goes out (or /pass or /reset drops it). */
function waitingLine(waiting: WaitingPost): string {
  const { post, tries } = waiting;
  const what =
    post.agent === null ? 'a line of the bridge' : `@${post.agent}'s ${post.purpose === 'reply' ? 'reply' : 'message'}`;
  return (
    `Waiting to be posted: ${what}, ${tries} failed ${tries === 1 ? 'try' : 'tries'} since ${time(waiting.since)} UTC ` +
    `(${waiting.reason}); next try at ${time(waiting.next)} UTC. /pass or /reset drops it.`
  );
}

/** Operators see private agent chats: each pair's message count and last message time, and pending requests. */
async function privateChatLines(deps: StatusDeps): Promise<string[]> {
  const lines: string[] = [];
  const spell = (name: string) => deps.agents.find((a) => a.name.toLowerCase() === name.toLowerCase())?.name ?? name;
  for (const room of (await deps.store.rooms.all()).filter((r) => r.platform === PRIVATE_PLATFORM)) {
    const history = await deps.store.rooms.history(room.id, 1000);
    const last = history.at(-1);
    if (!last) continue;
    const pair = room.channel
      .split('+')
      .map((name) => `@${spell(name)}`)
      .join(' + ');
    lines.push(`Private chats: ${pair}: ${history.length} messages, last at ${time(last.at)} UTC`);
  }
  const now = deps.clock();
  for (const agent of deps.agents) {
    for (const r of await deps.store.chats.involving(agent.name)) {
      if (r.status === 'pending' && r.expiresAt > now && r.from === agent.name) {
        lines.push(`Chat request #${r.id}: @${r.from} -> @${r.to} (pending): ${r.reason}`);
      }
    }
  }
  return lines;
}
