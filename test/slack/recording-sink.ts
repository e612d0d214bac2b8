import type { AgentConfig } from '../../src/config/index.js';
import type { AdapterSink, CommandEvent, Inbound } from '../../src/ports.js';
import type { FakeApp } from '../fakes/slack/index.js';

/** A sink that records what the adapter hands over, and answers commands with a fixed text. */
export class RecordingSink implements AdapterSink {
  readonly received: Inbound[] = [];
  readonly commands: CommandEvent[] = [];
  constructor(private readonly answer = 'done') {}

  async receive(event: Inbound): Promise<void> {
    this.received.push(event);
  }

  async command(event: CommandEvent): Promise<string | undefined> {
    this.commands.push(event);
    return `${this.answer} (${event.name})`;
  }

  lastMessageId(): string | undefined {
    return undefined;
  }
}

/** The `slack` block of a test agent whose app lives in the fake workspace. */
export function slackKeys(
  app: FakeApp,
  options: { control?: boolean; http?: boolean } = {},
): NonNullable<AgentConfig['slack']> {
  return {
    botToken: app.botToken,
    appToken: options.http ? undefined : app.appToken,
    signingSecret: options.http ? app.signingSecret : undefined,
    control: options.control ?? false,
  };
}
