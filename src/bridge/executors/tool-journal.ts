import type { ToolJournal, ToolRunRecord } from '../../store/port.js';
import { failed, type Tool } from '../../tools/tool.js';

/** JSON with object keys sorted, so the same arguments always give the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * A turn's tools, journaled: each call is written down before it runs and its result after. When the turn
 * is taken again after a restart, a call with the same tool and arguments as one already made is answered
 * from the record — a side effect that happened never happens twice; a call the crash cut is not run again, unless
 * its tool is idempotent (an MCP tool marked so), and then it is made again.
 */
export function journaledTools(
  tools: readonly Tool[],
  journal: ToolJournal,
  turn: { readonly room: string; readonly ask: number },
  earlier: readonly ToolRunRecord[],
  clock: () => number,
): Tool[] {
  const unused = [...earlier];
  return tools.map((tool) => ({
    name: tool.name,
    definition: tool.definition,
    ...(tool.inputOf ? { inputOf: tool.inputOf } : {}),
    ...(tool.idempotent ? { idempotent: true } : {}),
    async run(args, context) {
      const key = canonicalJson(args);
      // Written down before it runs, so a call a crash cuts is still named (its command, or its arguments).
      const shown = tool.inputOf?.(args) || key;
      const at = unused.findIndex((run) => run.tool === tool.name && run.args === key);
      const before = at >= 0 ? unused.splice(at, 1)[0] : undefined;
      if (before) {
        if (before.status === 'started' || before.output === null) {
          // A tool that says a second call does no more than the first (idempotent) is simply made again.
          if (!tool.idempotent) {
            return failed(
              before.input || shown,
              'this call was cut by a restart (it may have run in part); it was not run again',
            );
          }
        } else {
          return { status: before.status, input: before.input ?? key, output: before.output };
        }
      }
      const id = await journal.started(turn.room, turn.ask, tool.name, key, clock(), shown);
      try {
        const result = await tool.run(args, context);
        await journal.ended(id, result);
        return result;
      } catch (error) {
        // Stopped (/pass) or broken: it ran as far as it got, and is not replayed as a success.
        await journal.ended(id, { status: 'failed', input: key, output: `[ERROR: ${String(error)}]` });
        throw error;
      }
    },
  }));
}
