import { describe, expect, it } from 'vitest';
import { describeError } from '../src/errors.js';
import { redact, redactUrl, rememberSecrets, urlSecrets } from '../src/secrets.js';

describe('redact', () => {
  it('replaces remembered secrets, also percent-encoded and JSON-escaped', () => {
    rememberSecrets(['plain-secret-value', 'p@ss/w"rd\\1']);
    expect(redact('key plain-secret-value used')).toBe('key [redacted] used');
    expect(redact('http://h/x?q=p%40ss%2Fw%22rd%5C1')).toBe('http://h/x?q=[redacted]');
    expect(redact('{"msg":"p@ss/w\\"rd\\\\1"}')).toBe('{"msg":"[redacted]"}');
  });

  it('ignores values too short to tell from ordinary words', () => {
    rememberSecrets(['abc', undefined]);
    expect(redact('abc def')).toBe('abc def');
  });

  it('redacts credentials inside URLs: user:password, and secret query parameters', () => {
    expect(redact('GET http://alice:hunter22@example.test:8080/v1/chat failed')).toBe(
      'GET http://[redacted]@example.test:8080/v1/chat failed',
    );
    expect(redact('https://example.test/v1?api-version=2024-06&api-key=abc123&x=1')).toBe(
      'https://example.test/v1?api-version=2024-06&api-key=[redacted]&x=1',
    );
    expect(redact('https://example.test/models?key=AIzaXYZ#top')).toBe(
      'https://example.test/models?key=[redacted]#top',
    );
    expect(redact('wss://example.test/socket?access_token=tok9&client_secret=s3')).toBe(
      'wss://example.test/socket?access_token=[redacted]&client_secret=[redacted]',
    );
    expect(redact('retry with token=abc.def')).toBe('retry with token=[redacted]');
  });

  it('redacts credential shapes: OpenAI keys, Slack tokens, Bearer and Basic values', () => {
    expect(redact('Incorrect API key provided: sk-proj-abcdefghijklmnop1234.')).toBe(
      'Incorrect API key provided: [redacted].',
    );
    expect(redact('xoxb-1234-5678-abcdefgh and xapp-1-A111-2222-ffff')).toBe('[redacted] and [redacted]');
    expect(redact('authorization: Bearer abc.DEF-123_x')).toBe('authorization: Bearer [redacted]');
    expect(redact('Authorization: Basic YWxpY2U6aHVudGVyMjI=')).toBe('Authorization: Basic [redacted]');
  });

  it('leaves ordinary text alone', () => {
    const text = 'Basic authentication is off; monkey=3 and api-version=2024 at https://example.test/v1?page=2';
    expect(redact(text)).toBe(text);
  });
});

describe('URL credentials', () => {
  it('finds the password (or a lone user name) and secret query values, decoded', () => {
    expect(urlSecrets('http://alice:p%40ss@h/v1?api-key=k1&api-version=2&token=t2')).toEqual(['p@ss', 'k1', 't2']);
    expect(urlSecrets('https://ghp_usertoken@h/repo')).toEqual(['ghp_usertoken']);
    expect(urlSecrets('not a url')).toEqual([]);
  });

  it("takes a database URL's password, never its role name, which is no key", () => {
    expect(urlSecrets('postgres://postgres@db/rt', { userIsSecret: false })).toEqual([]);
    expect(urlSecrets('postgres://rt:pw%2Fx@db/rt?password=p2', { userIsSecret: false })).toEqual(['pw/x', 'p2']);
  });

  it('redactUrl shows where, never the credentials', () => {
    expect(redactUrl('http://bob:pw@127.0.0.1:9/v1?key=zz')).toBe('http://[redacted]@127.0.0.1:9/v1?key=[redacted]');
  });
});

describe('describeError', () => {
  it('redacts what the error says', () => {
    rememberSecrets(['a-configured-api-key']);
    expect(describeError(new Error('401: Incorrect API key provided: a-configured-api-key'))).toBe(
      '401: Incorrect API key provided: [redacted]',
    );
    expect(describeError('fetch http://u:secretpw@h/ failed')).toBe('fetch http://[redacted]@h/ failed');
  });
});
