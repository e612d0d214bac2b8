/**
 * A server's tools as the agent's tools: named `server__tool` (never a bridge tool's name or another's), their
 * schemas checked (a tool whose schema a strict server would refuse is left out, with why), the arguments of a call
 * validated before it is made, the result read into text and workspace files.
 */
import { ErrorCode, type Tool as ListedTool, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describeError } from '../errors.js';
import { metrics } from '../metrics.js';
import { usdToNano } from '../spend/money.js';
import { failed, ok, refused, type Tool, type ToolContext } from '../tools/tool.js';
import { workspaceFilesFor } from '../tools/workspace-path.js';
import type { McpConnection } from './connection.js';
import { resultText } from './result.js';
import { checkedSchema, toolName } from './schema.js';

/** A tool of a server that is not offered to the model, and why. */
export interface LeftOut {
  readonly server: string;
  readonly tool: string;
  readonly problem: string;
}

/** What the tool adapter needs of a server. */
export interface ServerHandle {
  readonly connection: Pick<McpConnection, 'call' | 'name'>;
  /** `timeout_s` in ms; absent: the command timeout. */
  readonly timeoutMs?: number | undefined;
  /** `price_usd_per_call`: each call held against the spending limits first. */
  readonly priceUsd?: number | undefined;
}

/** A description as the model reads it: the server's words, bounded. */
function descriptionOf(tool: ListedTool): string {
  const text = (tool.description ?? tool.title ?? '').trim();
  return text.length > 1024 ? `${text.slice(0, 1021)}...` : text;
}

/** One listed tool as the agent's tool (or why it is left out). */
function adapted(server: ServerHandle, listed: ListedTool, name: string): Tool | LeftOut {
  const serverName = server.connection.name;
  const schema = checkedSchema(listed.inputSchema);
  if ('problem' in schema) return { server: serverName, tool: listed.name, problem: schema.problem };
  const { parameters, check } = schema;
  return {
    name,
    definition: { type: 'function', function: { name, description: descriptionOf(listed), parameters } },
    ...(listed.annotations?.idempotentHint === true ? { idempotent: true } : {}),
    async run(args, context: ToolContext) {
      const input = JSON.stringify(args ?? {});
      const problem = check(args ?? {});
      if (problem) {
        metrics.mcpCalls.inc({ server: serverName, tool: listed.name, status: 'refused' });
        return refused(input, `the arguments do not fit ${name}'s schema: ${problem}`);
      }
      // A priced call is held like a model call: over a limit it is not made (the limit's error ends the turn).
      const price = server.priceUsd && context.spend ? usdToNano(server.priceUsd) : 0;
      const hold = price > 0 ? await context.spend?.hold(price, context.signal) : undefined;
      let answered = false;
      const started = performance.now();
      // A signal of its own per call: the SDK leaves its listener on the signal it is given, and a turn makes many.
      const call = new AbortController();
      const stop = () => call.abort(context.signal.reason);
      context.signal.addEventListener('abort', stop, { once: true });
      try {
        const result = await server.connection.call(listed.name, (args ?? {}) as Record<string, unknown>, {
          signal: call.signal,
          timeoutMs: server.timeoutMs ?? context.commandTimeoutMs,
        });
        answered = true;
        const files = await workspaceFilesFor(context.sandbox, context.channelKey).catch(() => undefined);
        const text = await resultText(serverName, result, {
          files,
          ...(context.sandbox.checkDisk
            ? {
                checkDisk: (bytes: number) =>
                  context.sandbox.checkDisk?.(context.channelKey, bytes, 1) as Promise<void>,
              }
            : {}),
        });
        const status = result.isError ? 'failed' : 'ok';
        metrics.mcpCalls.inc({ server: serverName, tool: listed.name, status });
        return result.isError ? failed(input, text || 'the tool reported an error') : ok(input, text || '(no output)');
      } catch (error) {
        // Cut at its timeout: the server had the call, and may have done the work.
        answered ||= error instanceof McpError && error.code === ErrorCode.RequestTimeout;
        // /pass: the SDK has sent notifications/cancelled; the turn stops here.
        context.signal.throwIfAborted();
        metrics.mcpCalls.inc({ server: serverName, tool: listed.name, status: 'failed' });
        return failed(input, describeError(error).split('\n')[0] ?? 'the MCP call failed');
      } finally {
        // Spent once answered, timed out or stopped by /pass; a call that never reached a working server costs nothing.
        if (hold) await (answered || context.signal.aborted ? hold.settle() : hold.release());
        context.signal.removeEventListener('abort', stop);
        metrics.mcpSeconds.observe({ server: serverName }, (performance.now() - started) / 1000);
      }
    },
  };
}

/**
 * The tools of an agent's servers, in a stable order (sorted by name, so the prompt's tool block stays the same from
 * call to call), named so that none takes a name in `reserved` (the bridge's tools) or another's.
 */
export function mcpTools(
  servers: ReadonlyArray<{ readonly handle: ServerHandle; readonly tools: readonly ListedTool[] }>,
  reserved: readonly string[],
): { readonly tools: Tool[]; readonly leftOut: LeftOut[] } {
  const taken = new Set(reserved);
  const tools: Tool[] = [];
  const leftOut: LeftOut[] = [];
  for (const { handle, tools: listed } of servers) {
    const sorted = [...listed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const tool of sorted) {
      const name = toolName(handle.connection.name, tool.name, taken);
      const made = adapted(handle, tool, name);
      if ('problem' in made) {
        leftOut.push(made);
        continue;
      }
      taken.add(name);
      tools.push(made);
    }
  }
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { tools, leftOut };
}
