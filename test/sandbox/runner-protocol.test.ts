import { describe, expect, it } from 'vitest';
import { OutputBuffer, TRUNCATION_MARKER } from '../../sandbox/output-buffer.js';
import { encodeRequest, RunnerDecoder, type RunnerFrame, RunnerProtocolError } from '../../sandbox/runner-protocol.js';
import { BAKED_RUNNER_PATH, RUNNER_SOURCE, runnerLaunch, sourceDigest } from '../../sandbox/runner-source.js';

function reply(kind: string, id: number, payload: Buffer | string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(9);
  header.writeUInt32BE(body.length, 0);
  header.writeUInt8(kind.charCodeAt(0), 4);
  header.writeUInt32BE(id, 5);
  return Buffer.concat([header, body]);
}

describe('command runner protocol', () => {
  it('frames a request as a 4-byte length and JSON', () => {
    const frame = encodeRequest({ op: 'run', id: 7, command: 'echo ✓' });
    const body = frame.subarray(4);
    expect(frame.readUInt32BE(0)).toBe(body.length);
    expect(JSON.parse(body.toString('utf8'))).toEqual({ op: 'run', id: 7, command: 'echo ✓' });
  });

  it('reassembles replies split at every possible byte', () => {
    const stream = Buffer.concat([
      reply('H', 0, '{"protocol":1}'),
      reply('A', 3, ''),
      reply('O', 3, Buffer.from([0xff, 0x00, 0x41])),
      reply('G', 3, '{"skipped":10}'),
      reply('E', 3, '{"exit":0}'),
    ]);
    for (let cut = 0; cut <= stream.length; cut += 1) {
      const frames: RunnerFrame[] = [];
      const decoder = new RunnerDecoder((frame) => frames.push(frame));
      decoder.write(stream.subarray(0, cut));
      decoder.write(stream.subarray(cut));
      expect(frames.map((frame) => [frame.kind, frame.id, frame.payload.toString('hex')])).toEqual([
        ['hello', 0, Buffer.from('{"protocol":1}').toString('hex')],
        ['accepted', 3, ''],
        ['output', 3, 'ff0041'],
        ['gap', 3, Buffer.from('{"skipped":10}').toString('hex')],
        ['end', 3, Buffer.from('{"exit":0}').toString('hex')],
      ]);
    }
  });

  it('refuses an unknown kind or an oversized frame instead of buffering it', () => {
    const unknown = new RunnerDecoder(() => undefined);
    expect(() => unknown.write(reply('X', 1, 'x'))).toThrow(RunnerProtocolError);
    const huge = Buffer.alloc(9);
    huge.writeUInt32BE(64 * 1024 * 1024, 0);
    huge.writeUInt8('O'.charCodeAt(0), 4);
    expect(() => new RunnerDecoder(() => undefined).write(huge)).toThrow(RunnerProtocolError);
  });

  it('uses the image’s baked runner only when it is this bridge’s runner byte for byte', () => {
    const baked = runnerLaunch(RUNNER_SOURCE, sourceDigest(RUNNER_SOURCE));
    expect(baked).toEqual({ cmd: ['python3', '-I', '-S', BAKED_RUNNER_PATH], preamble: undefined });

    for (const digest of [undefined, sourceDigest('an older runner')]) {
      const injected = runnerLaunch(RUNNER_SOURCE, digest);
      expect(injected.cmd.slice(0, 4)).toEqual(['python3', '-I', '-S', '-c']);
      expect(injected.cmd[5]).toBe(String(Buffer.byteLength(RUNNER_SOURCE)));
      expect(injected.preamble?.toString('utf8')).toBe(RUNNER_SOURCE);
    }
  });
});

describe('OutputBuffer after a gap left by the runner', () => {
  it('cuts the output and takes its tail from what follows the gap', () => {
    const buffer = new OutputBuffer();
    buffer.write(Buffer.from('h'.repeat(32_768)));
    buffer.skip();
    buffer.write(Buffer.from(`${'x'.repeat(6_000)}${'t'.repeat(2_000)}`));
    expect(buffer.text()).toBe('h'.repeat(5_000) + TRUNCATION_MARKER + 't'.repeat(2_000));
  });

  it('does not let a character split by the gap leak into the tail', () => {
    const buffer = new OutputBuffer();
    const head = Buffer.from('é'.repeat(16_384));
    // The head ends inside a 4-byte character; the tail starts inside another.
    buffer.write(Buffer.concat([head, Buffer.from('😀').subarray(0, 2)]));
    buffer.skip();
    buffer.write(Buffer.concat([Buffer.from('😀').subarray(2), Buffer.from('✓'.repeat(3_000))]));
    const text = buffer.text();
    expect(text.startsWith('é'.repeat(5_000) + TRUNCATION_MARKER)).toBe(true);
    expect(text.endsWith('✓'.repeat(2_000))).toBe(true);
  });
});
