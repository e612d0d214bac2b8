import { Duplex, PassThrough } from 'node:stream';
import type Dockerode from 'dockerode';
import { describe, expect, it, vi } from 'vitest';
import { spawnInContainer } from '../../sandbox/docker-process.js';
import { SandboxError } from '../../src/errors.js';

/** One frame of Docker's attach stream (stream 1 stdout, 2 stderr). */
const frame = (stream: number, text: string) => {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header.writeUInt8(stream, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

/** The process's attach stream: what the bridge writes is kept, what the test pushes is read. */
class FakeAttach extends Duplex {
  written: Buffer[] = [];
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.written.push(chunk);
    done();
  }
}

/**
 * A container whose first exec is the process (its stream given) and every later one a helper (the killer) that ends at
 * once; each exec's command is recorded.
 */
function fakeContainer(attach: FakeAttach) {
  const commands: string[][] = [];
  const container = {
    exec: async (options: { Cmd: string[] }) => {
      commands.push(options.Cmd);
      const first = commands.length === 1;
      return {
        start: async () => {
          if (first) return attach;
          const helper = new PassThrough();
          helper.end();
          return helper;
        },
        inspect: async () => ({ Running: false, ExitCode: 0 }),
      };
    },
    inspect: async () => ({ State: { Running: true, Status: 'running' } }),
  };
  return { container: container as unknown as Dockerode.Container, commands };
}

const spec = { command: 'cat', args: [], env: {} };

describe('a process in the sandbox, against a fake engine', () => {
  it('gives up on a start the engine never answers, with a short reason, and lets go of its stream', async () => {
    const attach = new FakeAttach();
    const { container, commands } = fakeContainer(attach);
    const failure = await spawnInContainer(container, spec, { startTimeoutMs: 200 }).catch((error) => error);
    expect(failure).toBeInstanceOf(SandboxError);
    expect((failure as SandboxError).message).toBe(
      'the process did not start within 200 ms (the machine or the Docker engine is overloaded); try again',
    );
    // No pid came, so there is nothing to kill by it: the stream is dropped, which closes the process's stdin.
    expect(commands).toHaveLength(1);
    expect(attach.destroyed).toBe(true);
  });

  it('kills by the pid the launcher said', async () => {
    const attach = new FakeAttach();
    const { container, commands } = fakeContainer(attach);
    const starting = spawnInContainer(container, spec);
    attach.push(frame(1, 'R42\n'));
    const child = await starting;
    const killing = child.kill();
    await vi.waitFor(() => expect(commands).toHaveLength(2));
    expect(commands[1]?.slice(3)).toEqual(['roundtable-kill', '42']);
    attach.push(null);
    await killing;
    expect(child.exited).toBe(true);
  });

  it('survives its stream failing more than once, and ignores writes once it has ended', async () => {
    const attach = new FakeAttach();
    const { container } = fakeContainer(attach);
    const starting = spawnInContainer(container, spec);
    // The launcher's line may come in pieces, and the process's first output with its end.
    attach.push(frame(1, 'R4'));
    attach.push(frame(1, '2\nhello'));
    const child = await starting;
    let out = '';
    child.onStdout((chunk) => {
      out += Buffer.from(chunk).toString();
    });
    const exits: (number | null)[] = [];
    child.onExit((code) => exits.push(code));
    expect(out).toBe('hello');
    expect(child.exited).toBe(false);
    attach.emit('error', new Error('EPIPE'));
    attach.emit('error', new Error('EPIPE again'));
    await vi.waitFor(() => expect(exits).toEqual([0]));
    child.write('after the end\n');
    expect(Buffer.concat(attach.written).toString()).toBe('');
  });
});
