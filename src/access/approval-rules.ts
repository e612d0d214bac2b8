/**
 * Which of an agent's tool calls wait for a person's approval (rule 17; docs/trust.md): an agent file's
 * `approvals:` (a tool's name → off, ask or deny), with `bash_allow:` / `bash_deny:` patterns on the command, under a
 * floor no setting lifts (commands that wipe the workspace or the machine are refused in every mode).
 */
import { KNOWN_TOOLS } from '../config/agent-file.js';
import { ConfigError } from '../errors.js';
import { usdToNano } from '../spend/money.js';

export type ApprovalMode = 'off' | 'ask' | 'deny';

export interface ApprovalRules {
  /** By tool name; a tool not named is `off`. */
  readonly modes: ReadonlyMap<string, ApprovalMode>;
  /** Commands run without asking (when bash is `ask`), and commands refused, as written (`git status*`). */
  readonly bashAllow: readonly string[];
  readonly bashDeny: readonly string[];
  /**
   * `spend_threshold_usd:` with `approvals: { spend_usd_per_call: ask | deny }`: a model call whose worst case (its
   * hold) is above this many nano-dollars waits for a person (ask) or is not made (deny).
   */
  readonly spendOver?: { readonly nano: number; readonly mode: 'ask' | 'deny' } | undefined;
}

/** The action that names a model call's price in `approvals:` (not a tool). */
export const SPEND_ACTION = 'spend_usd_per_call';

/** Refused in every mode, whatever an agent file says: what wipes the workspace, the disk or the machine. */
const FLOOR: ReadonlyArray<{ readonly pattern: RegExp; readonly why: string }> = [
  {
    // rm -rf (in any order or spelling of its flags) of /, ~, /workspace, . or * at the top of the workspace
    pattern:
      /\brm\s+(?:-{1,2}[\w-]+\s+)*(?:-[a-z]*r[a-z]*f|-[a-z]*f[a-z]*r|--recursive\s+--force|--force\s+--recursive|-r\s+-f|-f\s+-r)\b[^;&|]*?\s(?:\/|~\/?|\/workspace\/?|\.\/?|\*|\/\*|\/workspace\/\*)(?=\s|$|;|&|\|)/i,
    why: 'it would wipe the workspace or the machine',
  },
  { pattern: /\bmkfs(\.\w+)?\b/i, why: 'it would format a file system' },
  { pattern: /\bdd\b[^;&|]*\bof=\/dev\/(?!null\b)/i, why: 'it would write over a device' },
  { pattern: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, why: 'it is a fork bomb' },
  { pattern: /\bfind\s+(?:\/|~|\/workspace)\s[^;&|]*-delete\b/i, why: 'it would wipe the workspace or the machine' },
];

/** The floor's reason when a command hits it. */
export function floorOf(command: string): string | undefined {
  return FLOOR.find((rule) => rule.pattern.test(command))?.why;
}

/** A pattern as people write it: `*` any characters, `?` one; the whole command must match (spaces trimmed). */
export function globMatches(pattern: string, command: string): boolean {
  const source = pattern
    .trim()
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 's').test(command.trim());
}

/** The MCP server an action names (`server__tool`, or `server__*` for all its tools), when it is one of `servers`. */
function mcpServerOf(action: string, servers: readonly string[]): string | undefined {
  const at = action.indexOf('__');
  const server = at > 0 ? action.slice(0, at) : undefined;
  return server && action.length > at + 2 && servers.includes(server) ? server : undefined;
}

/**
 * The rules of an agent file; an action that is no tool names the file and field. An MCP tool is named as the model
 * sees it (`server__tool`), or every tool of a server at once (`server__*`), for a server in the agent's `mcp:`.
 */
export function approvalRules(
  file: string,
  front: {
    readonly approvals?: Readonly<Record<string, ApprovalMode>> | undefined;
    readonly bash_allow?: readonly string[] | undefined;
    readonly bash_deny?: readonly string[] | undefined;
    readonly spend_threshold_usd?: number | undefined;
  },
  mcpServers: readonly string[] = [],
): ApprovalRules {
  const modes = new Map<string, ApprovalMode>();
  let spendMode: ApprovalMode | undefined;
  for (const [action, mode] of Object.entries(front.approvals ?? {})) {
    if (action === SPEND_ACTION) {
      spendMode = mode;
      continue;
    }
    if (!(KNOWN_TOOLS as readonly string[]).includes(action) && !mcpServerOf(action, mcpServers)) {
      const servers = mcpServers.length > 0 ? `, or server__tool / server__* for ${mcpServers.join(', ')}` : '';
      throw new ConfigError(
        file,
        `approvals.${action}`,
        `is not a tool (known: ${KNOWN_TOOLS.join(', ')}${servers}) nor ${SPEND_ACTION}`,
      );
    }
    modes.set(action, mode);
  }
  const over = front.spend_threshold_usd;
  if (spendMode !== undefined && spendMode !== 'off' && over === undefined) {
    throw new ConfigError(
      file,
      `approvals.${SPEND_ACTION}`,
      'needs spend_threshold_usd: the price (USD) above which a call is held',
    );
  }
  const spendOver =
    over !== undefined && spendMode !== 'off'
      ? { nano: usdToNano(over), mode: spendMode === 'deny' ? ('deny' as const) : ('ask' as const) }
      : undefined;
  return {
    modes,
    bashAllow: front.bash_allow ?? [],
    bashDeny: front.bash_deny ?? [],
    ...(spendOver ? { spendOver } : {}),
  };
}

/** What becomes of one call: run it (`off`), ask a person (`ask`), or refuse it (`deny`, with why). */
export function modeFor(
  rules: ApprovalRules | undefined,
  tool: string,
  input: string,
): { readonly mode: ApprovalMode; readonly why: string } {
  if (tool === 'bash') {
    const floor = floorOf(input);
    if (floor) return { mode: 'deny', why: `this command is never run: ${floor}` };
    if (rules?.bashDeny.some((p) => globMatches(p, input))) {
      return { mode: 'deny', why: "this command is refused by the agent's bash_deny list" };
    }
    if (rules?.bashAllow.some((p) => globMatches(p, input))) return { mode: 'off', why: 'on bash_allow' };
  }
  const at = tool.indexOf('__');
  const server = at > 0 ? rules?.modes.get(`${tool.slice(0, at)}__*`) : undefined;
  const mode = rules?.modes.get(tool) ?? server ?? 'off';
  return { mode, why: mode === 'deny' ? `${tool} is not allowed for this agent (approvals: deny)` : '' };
}
