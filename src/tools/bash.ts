import { z } from 'zod';
import { describeError, SandboxError } from '../errors.js';
import { timeInTool } from '../trace/tool.js';
import { defineTool, failed, ok } from './tool.js';

const COMMAND_ERROR = 'the "command" argument is missing or empty';

/** Runs a shell command in the room's sandbox (one container per channel). */
export const bashTool = defineTool({
  name: 'bash',
  description:
    "Run a bash command in this channel's sandbox (working directory /workspace, no network). " +
    'Returns combined stdout and stderr; long output is truncated.',
  schema: z.object({
    command: z
      .string({ error: COMMAND_ERROR })
      .refine((command) => command.trim() !== '', { error: COMMAND_ERROR })
      .describe('The command line to run with bash -c.'),
  }),
  inputOf: (args) => {
    const command = (args as { command?: unknown } | null)?.command;
    return typeof command === 'string' ? command : '';
  },
  async run({ command }, context) {
    try {
      const running = context.sandbox.exec(context.channelKey, command, {
        timeoutMs: context.commandTimeoutMs,
        signal: context.signal,
      });
      const result = await timeInTool('sandbox', running, { room: context.channelKey, agent: context.agent });
      let output = result.output;
      if (result.timedOut) {
        output += `${output && !output.endsWith('\n') ? '\n' : ''}[ERROR: Command timed out after ${Math.round(context.commandTimeoutMs / 1000)}s]`;
      } else if (result.exitCode !== 0 && result.exitCode !== null) {
        output += `${output && !output.endsWith('\n') ? '\n' : ''}[exit code: ${result.exitCode}]`;
      }
      // A command that ran is `ok` whatever its exit code: the model reads the code and decides.
      return ok(command, output || '(no output)');
    } catch (error) {
      const message = error instanceof SandboxError ? error.message : `the sandbox failed: ${describeError(error)}`;
      return failed(command, message);
    }
  },
});
