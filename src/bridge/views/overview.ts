/**
 * The operator console's view of the bridge: every room with its control state (from the live room when it is
 * loaded, else as stored), the open requests as trees, each agent's usage and estimated cost, each room's sandbox;
 * and, for the web room and the console, a room's stored messages a page at a time and the reasons recorded for them.
 * It only reads.
 */
import type { Config } from '../../config/index.js';
import { estimateCost } from '../../llm/usage-report.js';
import type {
  BridgeOverview,
  RequestNode,
  RoomOverview,
  SpendView,
  TranscriptEntry,
  WhyEntry,
} from '../../overview.js';
import type { Sandbox } from '../../ports.js';
import type { RequestRow } from '../../room/effects.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../room/state.js';
import type { LimitLine } from '../../spend/meter.js';
import { toUsd } from '../../spend/money.js';
import type { RoomRecord, StorePort } from '../../store/port.js';

/** A sandbox that does not answer within this long is shown as unknown (the console must not hang on Docker). */
const SANDBOX_WAIT_MS = 2000;
/** The longest request text the console shows. */
const TEXT_SHOWN = 300;

export interface OverviewDeps {
  readonly config: Config;
  readonly store: Pick<StorePort, 'rooms' | 'usage'>;
  readonly sandbox: Pick<Sandbox, 'describe'>;
  /** The rooms loaded now, by key: their state is newer than the stored snapshot may be. */
  readonly live: () => ReadonlyArray<{ key: string; state: RoomState; setup: RoomSetup }>;
  /** The room's fixed facts from the configuration. */
  readonly setup: (record: RoomRecord) => RoomSetup;
  /** The agents writing a turn in a room now. */
  readonly working: (room: string) => readonly string[];
  readonly clock: () => number;
  /** Today's spend against each limit (the bridge's, then each agent's). */
  readonly spend?: () => Promise<readonly LimitLine[]>;
  /** The access policy in force (as /access says it on Discord and Slack). */
  readonly access?: () => string;
  /** The room's MCP servers, a line each. */
  readonly mcp?: ((room: string) => string[]) | undefined;
}

export class Overview {
  constructor(private readonly deps: OverviewDeps) {}

  async read(): Promise<BridgeOverview> {
    const { deps } = this;
    const live = new Map(deps.live().map((room) => [room.key, room]));
    const records = await deps.store.rooms.all();
    const rooms = await Promise.all(
      records.map((record) => {
        const loaded = live.get(record.key);
        return this.room(record, loaded?.state ?? record.state ?? EMPTY_STATE, loaded?.setup ?? deps.setup(record));
      }),
    );
    const spend = (await deps.spend?.()) ?? [];
    const bridge = spend.find((line) => line.kind === 'bridge');
    return {
      at: deps.clock(),
      rooms,
      requests: requestTrees(await deps.store.rooms.requests()),
      agents: await this.usage(spend),
      ...(bridge ? { spend: spendView(bridge) } : {}),
      ...(deps.access ? { access: deps.access() } : {}),
    };
  }

  /** A page of a room's stored messages, oldest first; none for a room the store does not know. */
  async transcript(key: string, page: { before?: number | undefined; limit: number }): Promise<TranscriptEntry[]> {
    const record = (await this.deps.store.rooms.all()).find((r) => r.key === key);
    if (!record) return [];
    const rows = await this.deps.store.rooms.transcript(record.id, page);
    return rows.map((row) => ({
      cursor: row.id,
      id: row.platformId ?? `row-${row.id}`,
      seq: row.seq,
      author: row.author,
      kind: row.kind,
      text: row.text,
      toolRuns: row.toolRuns,
      at: row.at,
    }));
  }

  /** The reasons recorded about a room's messages `from`..`to` (by seq). */
  async decisions(key: string, from: number, to: number): Promise<WhyEntry[]> {
    const record = (await this.deps.store.rooms.all()).find((r) => r.key === key);
    return record ? this.deps.store.rooms.decisions(record.id, from, to) : [];
  }

  private async room(record: RoomRecord, state: RoomState, setup: RoomSetup): Promise<RoomOverview> {
    const working = this.deps.working(record.key);
    return {
      key: record.key,
      platform: record.platform,
      channel: record.channel,
      direct: record.directAgent,
      kind: setup.kind,
      control: {
        holder: state.control.holder,
        count: state.control.count,
        limit: setup.turnLimit,
        ...(state.control.reason !== undefined ? { reason: state.control.reason } : {}),
      },
      privacy: state.privacy ?? setup.privacy,
      working,
      queued: state.queue.map((ask) => ask.agent).filter((agent) => !working.includes(agent)),
      seq: state.seq,
      sandbox: await this.sandbox(record.key),
      approvals: (state.approvals ?? []).map((a) => ({
        id: a.id,
        agent: a.agent,
        tool: a.tool,
        status: a.status,
        ...(a.root && !a.operatorsOnly ? { root: a.root.name } : {}),
      })),
      mcp: this.deps.mcp?.(record.key) ?? [],
    };
  }

  private async sandbox(key: string): Promise<string | undefined> {
    const describe = this.deps.sandbox.describe;
    if (!describe) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('unknown (the sandbox did not answer in time)'), SANDBOX_WAIT_MS);
    });
    try {
      const line = await Promise.race([describe.call(this.deps.sandbox, key), late]);
      return line.replace(/^sandbox:\s*/i, '');
    } catch (error) {
      return `unknown (${error instanceof Error ? error.message : String(error)})`;
    } finally {
      clearTimeout(timer);
    }
  }

  private async usage(spend: readonly LimitLine[]): Promise<BridgeOverview['agents']> {
    const totals = new Map((await this.deps.store.usage.total()).map((row) => [row.agent.toLowerCase(), row]));
    return this.deps.config.agents.map((agent) => {
      const used = totals.get(agent.name.toLowerCase()) ?? { calls: 0, input: 0, cached: 0, output: 0 };
      return {
        agent: agent.name,
        model: agent.model,
        activation: agent.activation,
        calls: used.calls,
        input: used.input,
        cached: used.cached,
        output: used.output,
        ...(agent.price ? { cost: estimateCost(used, agent.price) } : {}),
        ...spendOf(agent.name, agent.price !== undefined, spend),
      };
    });
  }
}

function spendView(line: LimitLine): SpendView {
  return {
    spent: toUsd(line.spent),
    held: toUsd(line.reserved),
    limit: line.limit === null ? null : toUsd(line.limit),
  };
}

/** An agent's line, when it has a price (without one nothing of its spend is counted). */
function spendOf(name: string, priced: boolean, lines: readonly LimitLine[]): { spend?: SpendView } {
  const line = lines.find((l) => l.kind === 'agent' && l.name === name);
  return priced && line ? { spend: spendView(line) } : {};
}

const LIVE = new Set<RequestRow['status']>(['open', 'answered', 'expired']);

/** The live requests as trees: a request whose parent is live too hangs below it, in id order. */
export function requestTrees(rows: readonly RequestRow[]): RequestNode[] {
  const live = rows.filter((row) => LIVE.has(row.status));
  const ids = new Set(live.map((row) => row.id));
  const build = (row: RequestRow): RequestNode => ({
    id: row.id,
    requester: row.requester,
    target: row.target,
    origin: row.origin,
    text: row.text.length > TEXT_SHOWN ? `${row.text.slice(0, TEXT_SHOWN)}…` : row.text,
    status: row.status as RequestNode['status'],
    awaited: row.awaited.map((p) => {
      const answer = row.answers.find((a) => a.participant.toLowerCase() === p.name.toLowerCase());
      return { name: p.name, kind: p.kind, ...(answer ? { outcome: answer.outcome } : {}) };
    }),
    openedAt: row.openedAt,
    deadline: row.deadline,
    children: live.filter((child) => child.parent === row.id).map(build),
  });
  return live.filter((row) => row.parent === null || !ids.has(row.parent)).map(build);
}
