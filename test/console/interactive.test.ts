import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleAdapter, STOPPED_LINE } from '../../adapters/console/console-adapter.js';
import { BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON } from '../../adapters/console/screen.js';
import type { AdapterSink, CommandEvent, Inbound } from '../../src/ports.js';
import { until } from '../helpers/until.js';
import { FakeTerminal } from './fake-terminal.js';

/** A bridge stand-in: records what arrives; the room stays busy until `idle()`. */
class FakeRoom implements AdapterSink {
  readonly received: Inbound[] = [];
  readonly commands: CommandEvent[] = [];
  /** The agents whose turns run now, as the bridge would say. */
  agents: string[] = [];
  private release: (() => void) | undefined;
  private busy: Promise<void> | undefined;

  async receive(event: Inbound): Promise<void> {
    this.received.push(event);
  }
  async command(event: CommandEvent): Promise<string> {
    this.commands.push(event);
    return `did /${event.name}`;
  }
  lastMessageId(): string | undefined {
    return undefined;
  }
  async settled(): Promise<void> {
    await this.busy;
  }
  working(): readonly string[] {
    return this.agents;
  }
  /** From now on, the room is at work. */
  work(): void {
    this.busy ??= new Promise((resolve) => {
      this.release = resolve;
    });
  }
  idle(): void {
    this.release?.();
    this.busy = undefined;
  }
}

let adapter: ConsoleAdapter | undefined;
afterEach(async () => {
  await adapter?.stop();
  adapter = undefined;
});

async function open(options: { now?: () => number } = {}) {
  const terminal = new FakeTerminal();
  const room = new FakeRoom();
  adapter = new ConsoleAdapter({ input: terminal.input, output: terminal.output, interactive: true, ...options });
  await adapter.start(room);
  return { terminal, room, adapter };
}

describe('the terminal room on a terminal', () => {
  it('shows "@data is thinking…" below the messages while a turn runs, and clears it when the turn ends', async () => {
    const { terminal, room, adapter } = await open();
    room.work();
    await adapter.typing('main', 'data');
    terminal.type('half a th');
    await until(() => terminal.written.includes('half a th'));
    expect(await terminal.screen()).toEqual(['@data is thinking…', '[@user]: half a th']);

    adapter.toolRun('main', 'data', 'ls', 'a.csv');
    expect(await terminal.screen()).toEqual([
      '[@data] running: ls',
      '[result]: a.csv',
      '@data is thinking…',
      '[@user]: half a th',
    ]);
    await adapter.post({ channel: 'main', agent: 'data', text: 'Done.' });
    expect((await terminal.screen()).slice(-2)).toEqual(['[@data]: Done.', '[@user]: half a th']);

    await adapter.typing('main', 'code');
    expect((await terminal.screen()).slice(-2)).toEqual(['@code is thinking…', '[@user]: half a th']);
    room.idle(); // the code agent passed: nothing posted, the room settled
    expect(await terminal.waitFor((rows) => !rows.includes('@code is thinking…'))).toEqual([
      '[@data] running: ls',
      '[result]: a.csv',
      '[@data]: Done.',
      '[@user]: half a th',
    ]);
    expect(await terminal.cursor()).toEqual({ row: 3, col: '[@user]: half a th'.length });
  });

  it('keeps a long half-typed line whole, over two rows, while messages arrive above it', async () => {
    const { terminal, room, adapter } = await open();
    const typed = `${'a'.repeat(45)} ${'b'.repeat(20)}`; // prompt + text: 75 columns of 60
    terminal.type(typed);
    await terminal.waitFor((rows) => rows.join('').endsWith('b'));
    room.work();
    await adapter.typing('main', 'data');
    await adapter.post({ channel: 'main', agent: 'code', text: 'one' });
    await adapter.post({ channel: 'main', agent: 'code', text: 'two' });
    const prompt = `[@user]: ${typed}`;
    expect(await terminal.screen()).toEqual([
      '[@code]: one',
      '[@code]: two',
      '@data is thinking…',
      prompt.slice(0, 60),
      prompt.slice(60),
    ]);
    terminal.type('\r');
    await until(() => room.received.length === 1);
    expect(room.received[0]?.text).toBe(typed);
  });

  it('keeps the thinking line below what the human sends meanwhile', async () => {
    const { terminal, room, adapter } = await open();
    room.work();
    await adapter.typing('main', 'data');
    terminal.type('also this\r');
    await until(() => room.received.length === 1);
    expect(await terminal.screen()).toEqual(['[@user]: also this', '@data is thinking…', '[@user]:']);
    expect(room.received[0]?.text).toBe('also this');
  });

  it('Ctrl-C while an agent works stops the turns as /pass does, says so, and keeps reading', async () => {
    const { terminal, room, adapter } = await open();
    room.work();
    await adapter.typing('main', 'data');
    terminal.type('\x03');
    await until(() => terminal.written.includes(STOPPED_LINE));
    expect(room.commands.map((c) => [c.name, c.args, c.isOperator])).toEqual([['pass', '', true]]);
    expect(await terminal.screen()).toEqual([STOPPED_LINE, '[@user]:']);
    room.idle();
    terminal.type('still here\r');
    await until(() => room.received.length === 1);
    expect(room.received[0]?.text).toBe('still here');
    let finished = false;
    void adapter.finished.then(() => {
      finished = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(finished).toBe(false);
  });

  it('Ctrl-C at an idle prompt quits at once and turns bracketed paste off', async () => {
    const { terminal, room, adapter } = await open();
    expect(terminal.written.startsWith(BRACKETED_PASTE_ON)).toBe(true);
    terminal.type('\x03');
    await adapter.finished;
    expect(room.commands).toEqual([]);
    expect(room.received).toEqual([]);
    expect(terminal.written.endsWith(BRACKETED_PASTE_OFF)).toBe(true);
  });

  it('Ctrl-C on a typed line clears the line instead of quitting; Up brings it back; Ctrl-C on the empty line quits', async () => {
    const { terminal, room, adapter } = await open();
    let finished = false;
    void adapter.finished.then(() => {
      finished = true;
    });
    terminal.type('half a thought');
    await terminal.waitFor((rows) => rows.at(-1) === '[@user]: half a thought');
    terminal.type('\x03');
    expect(await terminal.waitFor((rows) => rows.at(-1) === '[@user]:')).toEqual(['[@user]:']);
    expect(await terminal.cursor()).toEqual({ row: 0, col: '[@user]: '.length });
    expect(finished).toBe(false);
    expect(room.commands).toEqual([]);

    terminal.type('\x1b[A'); // Up
    await terminal.waitFor((rows) => rows.at(-1) === '[@user]: half a thought');
    terminal.type(' after all\r');
    await until(() => room.received.length === 1);
    expect(room.received[0]?.text).toBe('half a thought after all');
    terminal.type('\x03');
    await adapter.finished;
  });

  it('Ctrl-C on a typed line while an agent works clears only the line; the next Ctrl-C stops the turns', async () => {
    const { terminal, room, adapter } = await open();
    room.work();
    await adapter.typing('main', 'data');
    const typed = `${'draft '.repeat(10)}end`; // over two rows of 60 columns
    terminal.type(typed);
    await terminal.waitFor((rows) => rows.join('').endsWith('end'));
    terminal.type('\x03');
    expect(await terminal.waitFor((rows) => rows.at(-1) === '[@user]:')).toEqual(['@data is thinking…', '[@user]:']);
    expect(room.commands).toEqual([]);
    // The clearing press opened no window for quitting: this one stops the agents, as on an empty line.
    terminal.type('\x03');
    await until(() => terminal.written.includes(STOPPED_LINE));
    expect(room.commands.map((c) => c.name)).toEqual(['pass']);
    let finished = false;
    void adapter.finished.then(() => {
      finished = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(finished).toBe(false);
    room.idle();
  });

  it('Ctrl-C while a multi-line paste waits for Enter drops the whole paste', async () => {
    const { terminal, room } = await open();
    terminal.paste('first line\r\nsecond line\r\n');
    await terminal.waitFor((rows) => rows.at(-1) === '...');
    terminal.type('\x03');
    await terminal.waitFor((rows) => rows.at(-1) === '[@user]:');
    terminal.type('fresh start\r');
    await until(() => room.received.length === 1);
    expect(room.received.map((m) => m.text)).toEqual(['fresh start']);
  });

  it('/quit while agents work says whom it waits for, and leaves once the room is done', async () => {
    const { terminal, room, adapter } = await open();
    room.work();
    room.agents = ['data', 'code'];
    await adapter.typing('main', 'data');
    let finished = false;
    void adapter.finished.then(() => {
      finished = true;
    });
    terminal.type('/quit\r');
    await until(() => terminal.written.includes('leaving once'));
    expect((await terminal.screen()).join('')).toBe(
      '[@user]: /quit[system]: leaving once @data and @code finish (Ctrl-C leaves now)',
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(finished).toBe(false);
    room.idle();
    await adapter.finished;
  });

  it('/quit names each agent it goes on waiting for: one that starts after it is named too', async () => {
    const { terminal, room, adapter } = await open();
    room.work();
    room.agents = ['data'];
    await adapter.typing('main', 'data');
    terminal.type('/quit\r');
    await until(() => terminal.written.includes('leaving once'));
    // @data hands the question on: the room is not done, and leaving now waits for @code.
    room.agents = ['code'];
    await adapter.typing('main', 'code');
    await adapter.typing('main', 'code');
    await until(() => terminal.written.includes('finishes too'));
    expect((await terminal.screen()).filter((row) => row.startsWith('[system]'))).toEqual([
      '[system]: leaving once @data finishes (Ctrl-C leaves now)',
      '[system]: leaving once @code finishes too',
    ]);
    room.idle();
    await adapter.finished;
  });

  it('Ctrl-D while an agent works says whom it waits for, as /quit does', async () => {
    const { terminal, room, adapter } = await open();
    room.work();
    room.agents = ['data'];
    await adapter.typing('main', 'data');
    terminal.type('\x04');
    await until(() => terminal.written.includes('leaving once'));
    expect(await terminal.screen()).toEqual(['[system]: leaving once @data finishes (Ctrl-C leaves now)']);
    room.idle();
    await adapter.finished;
  });

  it('/quit in a quiet room leaves at once and says nothing', async () => {
    const { terminal, adapter } = await open();
    terminal.type('/quit\r');
    await adapter.finished;
    expect(terminal.written).not.toContain('leaving once');
  });

  it('a second Ctrl-C within a few seconds quits, even while the agents are still stopping', async () => {
    let now = 1_000_000;
    const { terminal, room, adapter } = await open({ now: () => now });
    room.work();
    await adapter.typing('main', 'data');
    terminal.type('\x03');
    await until(() => terminal.written.includes(STOPPED_LINE));
    now += 4000; // later than the window: stops again
    terminal.type('\x03');
    await until(() => room.commands.length === 2);
    now += 1000;
    terminal.type('\x03');
    await adapter.finished;
    expect(room.commands.map((c) => c.name)).toEqual(['pass', 'pass']);
  });

  it('sends a multi-line paste as one message when Enter is pressed', async () => {
    const { terminal, room } = await open();
    terminal.paste('look at this:\r\n```\r\n@code rm -rf /\r\n```\r\n');
    await terminal.waitFor((rows) => rows.at(-1) === '...');
    expect(room.received).toEqual([]);
    terminal.type('\r');
    await until(() => room.received.length === 1);
    expect(room.received[0]?.text).toBe('look at this:\n```\n@code rm -rf /\n```');
    expect(await terminal.screen()).toEqual([
      '[@user]: look at this:',
      '... ```',
      '... @code rm -rf /',
      '... ```',
      '...',
      '[@user]:',
    ]);

    terminal.paste('first\nsecond');
    terminal.type(' and more\r');
    await until(() => room.received.length === 2);
    expect(room.received[1]?.text).toBe('first\nsecond and more');
  });

  it('lists the commands and keys with /help', async () => {
    const { terminal, room } = await open();
    terminal.type('/help\r');
    await until(() => terminal.written.includes('Keys:'));
    const screen = (await terminal.screen()).join('\n');
    for (const command of ['/help', '/status', '/pass', '/reset', '/clear', '/quit', 'Ctrl-C', 'paste']) {
      expect(screen).toContain(command);
    }
    expect(room.commands).toEqual([]);
  });

  it("cannot be retitled, cleared or have its cursor moved by an agent's reply or a command's output", async () => {
    const { terminal, adapter } = await open();
    await adapter.post({ channel: 'main', agent: null, text: 'before' });
    const hostile = 'x\x1b]0;pwned\x07\x1b[2J\x1b[1;1H\x1b[5Aover\x1b]52;c;ZXZpbA==\x07\r\x1b[K\x1bc';
    await adapter.post({ channel: 'main', agent: 'data', text: hostile });
    adapter.toolRun('main', 'code', `cat ${hostile}`, `${hostile}\n`);
    expect(terminal.titles).toEqual([]);
    expect(await terminal.screen()).toEqual([
      '[system]: before',
      '[@data]: xover',
      '[@code] running: cat xover',
      '[result]: xover',
      '[@user]:',
    ]);
  });
});
