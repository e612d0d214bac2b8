import { describeError, SandboxError } from '../errors.js';
import type { Tool } from './tool.js';

/** Runs a shell command in the room's sandbox (one container per channel). */
export const bashTool: Tool = {
  name: 'bash',
  definition: {
    type: 'function',
    function: {
      name: 'bash',
      description:
        "Run a bash command in this channel's sandbox (working directory /workspace, no network). " +
        'Returns combined stdout and stderr; long output is truncated.',
      parameters: {
        type: 'object',
        properties: { command: { type: 'string', description: 'The command line to run with bash -c.' } },
        required: ['command'],
      },
    },
  },
  async run(args, context) {
    const command = typeof args.command === 'string' ? args.command : '';
    if (!command.trim()) return { input: command, output: '[ERROR: the "command" argument is missing or empty]' };
    try {
      const result = await context.sandbox.exec(context.channelKey, command, {
        timeoutMs: context.commandTimeoutMs,
        signal: context.signal,
      });
      let output = result.output;
      if (result.timedOut) {
        output += `${output && !output.endsWith('\n') ? '\n' : ''}[ERROR: Command timed out after ${Math.round(context.commandTimeoutMs / 1000)}s]`;
      } else if (result.exitCode !== 0 && result.exitCode !== null) {
        output += `${output && !output.endsWith('\n') ? '\n' : ''}[exit code: ${result.exitCode}]`;
      }
      return { input: command, output: output || '(no output)' };
    } catch (error) {
      const message = error instanceof SandboxError ? error.message : `the sandbox failed: ${describeError(error)}`;
      return { input: command, output: `[ERROR: ${message}]` };
    }
  },
};
