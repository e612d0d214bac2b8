import { describe, expect, it } from 'vitest';
import { OutputBuffer, TRUNCATION_MARKER } from '../../sandbox/output-buffer.js';

describe('OutputBuffer', () => {
  it('returns output of up to 10000 characters unchanged', () => {
    const buffer = new OutputBuffer();
    const text = 'x'.repeat(9_999);
    buffer.write(Buffer.from(text));
    buffer.write('y');
    expect(buffer.text()).toBe(`${text}y`);
    expect(buffer.length).toBe(10_000);
  });

  it('cuts longer output to its first 5000 and last 2000 characters', () => {
    const buffer = new OutputBuffer();
    const head = 'h'.repeat(5_000);
    const middle = 'm'.repeat(3_001);
    const tail = 't'.repeat(2_000);
    for (const part of [head, middle, tail]) buffer.write(Buffer.from(part));
    expect(buffer.text()).toBe(head + TRUNCATION_MARKER + tail);
    expect(TRUNCATION_MARKER).toBe('\n... [truncated] ...\n');
  });

  it('keeps the true last 2000 characters when they arrive in many small chunks', () => {
    const buffer = new OutputBuffer();
    let all = '';
    for (let i = 0; i < 5_000; i += 1) {
      const line = `line ${i}\n`;
      all += line;
      buffer.write(Buffer.from(line));
    }
    const text = buffer.text();
    expect(text.startsWith(all.slice(0, 5_000))).toBe(true);
    expect(text.endsWith(all.slice(-2_000))).toBe(true);
    expect(buffer.length).toBe(all.length);
  });

  it('decodes a multi-byte character split across two chunks', () => {
    const buffer = new OutputBuffer();
    const bytes = Buffer.from('naïve – ✓');
    buffer.write(bytes.subarray(0, 3));
    buffer.write(bytes.subarray(3));
    expect(buffer.text()).toBe('naïve – ✓');
  });

  it('holds a bounded amount however much is written', () => {
    const buffer = new OutputBuffer();
    const chunk = Buffer.alloc(64 * 1024, 'y');
    for (let i = 0; i < 1_000; i += 1) buffer.write(chunk);
    expect(buffer.length).toBe(64 * 1024 * 1_000);
    expect(buffer.text()).toHaveLength(5_000 + TRUNCATION_MARKER.length + 2_000);
  });
});
