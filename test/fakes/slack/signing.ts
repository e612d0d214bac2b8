import { createHmac } from 'node:crypto';

/** Slack's v0 request signature: `v0=` + HMAC-SHA256 of `v0:{timestamp}:{body}`. */
export function signRequest(secret: string, timestampS: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestampS}:${body}`).digest('hex')}`;
}

export interface SignedPostOptions {
  /** Sign with this secret instead of the app's (a forged request). */
  readonly secret?: string;
  /** Request time in seconds; older than five minutes is stale. */
  readonly timestampS?: number;
  readonly retryNum?: number;
  readonly retryReason?: string;
}

/** POSTs a signed body the way Slack calls an HTTP-mode app; resolves with the HTTP status and body. */
export async function postSigned(
  url: string,
  secret: string,
  body: string,
  contentType: string,
  options: SignedPostOptions = {},
): Promise<{ status: number; body: string }> {
  const timestampS = options.timestampS ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': contentType,
    'x-slack-request-timestamp': String(timestampS),
    'x-slack-signature': signRequest(options.secret ?? secret, timestampS, body),
  };
  if (options.retryNum !== undefined) headers['x-slack-retry-num'] = String(options.retryNum);
  if (options.retryReason !== undefined) headers['x-slack-retry-reason'] = options.retryReason;
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.text() };
}
