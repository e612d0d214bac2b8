import { describe, expect, it } from 'vitest';
import { FrameDecoder } from '../../sandbox/frame-decoder.js';

function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header.writeUInt8(stream, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

describe('FrameDecoder', () => {
  it('joins stdout and stderr payloads in arrival order', () => {
    const seen: string[] = [];
    const decoder = new FrameDecoder((payload) => seen.push(payload.toString()));
    decoder.write(Buffer.concat([frame(1, 'out\n'), frame(2, 'err\n'), frame(1, 'more')]));
    expect(seen.join('')).toBe('out\nerr\nmore');
  });

  it('handles headers and payloads split at every possible byte boundary', () => {
    const stream = Buffer.concat([frame(1, 'hello '), frame(2, 'wide ✓ world'), frame(1, '')]);
    for (let size = 1; size <= stream.length; size += 1) {
      const seen: Buffer[] = [];
      const decoder = new FrameDecoder((payload) => seen.push(Buffer.from(payload)));
      for (let offset = 0; offset < stream.length; offset += size)
        decoder.write(stream.subarray(offset, offset + size));
      expect(Buffer.concat(seen).toString()).toBe('hello wide ✓ world');
    }
  });
});
