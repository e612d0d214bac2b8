/**
 * `--check` for MCP servers: each HTTP and `run: host` server of each agent is started once, its tools listed and
 * counted (tools whose schemas are left out named), then stopped; a failure is one line (a command that is missing,
 * a handshake that failed, a protocol version the SDK does not speak). `run: host` is flagged. A `run: sandbox` server
 * is started through the sandbox's process port when the check has one; otherwise it is said to start at first use.
 */
import type { Config } from '../config/load.js';
import type { Logger } from '../log.js';
import type { Sandbox } from '../ports.js';
import type { CheckResult } from '../self-check.js';
import { McpConnection } from './connection.js';
import { serverLine } from './pool.js';
import { mcpTools } from './tools.js';

/** The room a `--check` start runs in (its sandbox, where a server runs in one). */
const CHECK_ROOM = 'check:mcp';
/** The longest a server's start may take in the check (a server that never answers is one line, not a hang). */
const CHECK_TIMEOUT_MS = 15_000;

export async function checkMcpServers(config: Config, log: Logger, sandbox?: Sandbox): Promise<CheckResult[]> {
  const spawn = sandbox?.spawn?.bind(sandbox);
  let spawned = false;
  const checks = config.agents.flatMap((agent) =>
    (agent.mcp ?? []).map(async (server): Promise<CheckResult> => {
      const item = `MCP @${agent.name} ${server.name}`;
      const where = serverLine(server).replace(/: not started$/, '');
      if (server.kind === 'stdio' && server.run === 'sandbox' && !spawn) {
        return { ok: true, item, detail: `${where}: starts in each room's sandbox at its first use` };
      }
      const connection = new McpConnection({
        server,
        spawn: spawn
          ? (spec) => {
              spawned = true;
              return spawn(CHECK_ROOM, spec);
            }
          : undefined,
        log,
        backoff: () => 0,
        startTimeoutMs: CHECK_TIMEOUT_MS,
      });
      try {
        await connection.ready();
        const { tools, leftOut } = mcpTools([{ handle: { connection }, tools: connection.tools }], []);
        const out = leftOut.map((l) => `${l.tool} (${l.problem})`).join('; ');
        const detail = `${where}: ${tools.length} tools${out ? `; left out: ${out}` : ''}`;
        return { ok: true, item, detail };
      } catch (error) {
        return { ok: false, item, detail: `${where}: ${(error as Error).message}` };
      } finally {
        await connection.close();
      }
    }),
  );
  const results = await Promise.all(checks);
  // The check's own room leaves nothing behind (its container, its workspace).
  if (spawned) await sandbox?.reset?.(CHECK_ROOM, { wipeWorkspace: true }).catch(() => {});
  return results;
}
