/**
 * TRACE_CONTENT=on: the spans carry the message's text, the prompt, the reply and a tool run's input and output —
 * redacted like the log (a known secret never reaches an exporter). The tool run's span has its status, exit code,
 * output size and time in the sandbox either way.
 */
import { describe, expect, it, vi } from 'vitest';
import { rememberSecrets } from '../../src/secrets.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import { attr, recordSpansInFile } from './spans.js';

let h: DiscordHarness | undefined;
const spans = recordSpansInFile(
  async () => {
    await h?.close();
    h = undefined;
  },
  { content: true },
);

const SECRET = 'hunter2-very-secret-value';

describe('traces with content', () => {
  it('carries text, prompt, reply and tool input and output, redacted', async () => {
    rememberSecrets([SECRET]);
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'mention', tools: ['bash'] }] });
    h.sandbox.onExec(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { output: `token ${SECRET}\n`, exitCode: 3 };
    });
    h.llm.respond((request) =>
      request.messages.at(-1)?.role === 'tool'
        ? { content: 'The command failed with exit code 3.' }
        : { toolCalls: [{ name: 'bash', arguments: { command: 'cat secret.txt' } }] },
    );
    const asked = h.discord.humanSays(
      'general',
      'alice',
      `<@${h.discord.bot('code-bot').id}> run it, the password is ${SECRET}`,
    );
    await h.discord.until(() => (h?.discord.botMessages('general').length ?? 0) === 1);
    await h.settle(asked.id);
    await vi.waitFor(() => expect(spans.named('post')).toHaveLength(1), { timeout: 30_000, interval: 20 });

    const [root] = spans.named('message');
    expect(attr(root, 'roundtable.text')).toBe('@code run it, the password is [redacted]');
    const [turn] = spans.named('chat code');
    expect(String(attr(turn, 'gen_ai.input.messages'))).toContain('run it, the password is [redacted]');
    expect(attr(turn, 'roundtable.reply')).toBe('The command failed with exit code 3.');
    const [tool] = spans.named('execute_tool bash');
    expect(spans.parentOf(tool as NonNullable<typeof tool>)).toBe(turn);
    expect(tool?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'bash',
      'roundtable.tool.status': 'ok',
      'roundtable.tool.exit': 3,
      'roundtable.tool.input': 'cat secret.txt',
    });
    expect(String(attr(tool, 'roundtable.tool.output'))).toContain('token [redacted]');
    expect(Number(attr(tool, 'roundtable.tool.bytes'))).toBeGreaterThan(0);
    expect(Number(attr(tool, 'roundtable.sandbox_ms'))).toBeGreaterThanOrEqual(15);
    expect(JSON.stringify(spans.spans().map((s) => s.attributes))).not.toContain(SECRET);
  }, 60_000);
});
