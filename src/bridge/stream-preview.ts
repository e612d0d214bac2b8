import { stripSpeakerPrefix } from '../llm/context.js';
import type { ChatAdapter, StreamingPost } from '../ports.js';

/** A hand-back tag, whole or still being written (`<wor` at the end): never shown. */
const TAG = /<world>\s*pass\s*<\/world>/gi;
const OPEN_TAG = '<world>';

/** The text as it may be shown: hand-back tags removed, an unfinished one cut off. */
export function withoutWorldPass(text: string): string {
  let shown = text.replace(TAG, '');
  const open = shown.toLowerCase().lastIndexOf('<world');
  if (open >= 0) shown = shown.slice(0, open);
  for (let n = Math.min(OPEN_TAG.length - 1, shown.length); n > 0; n--) {
    if (OPEN_TAG.startsWith(shown.slice(-n).toLowerCase())) return shown.slice(0, -n);
  }
  return shown;
}

/** Below this, a reply might still turn out to be `[pass]`: nothing is shown yet. */
const MIN_SHOWN = 12;

/**
 * Shows an agent's reply while the model writes it, on platforms that stream by edits. Nothing is
 * shown until the text cannot be a pass, and nothing of a reply handing control back.
 */
export class StreamPreview {
  post: StreamingPost | undefined;
  private off = false;

  constructor(
    private readonly adapter: ChatAdapter,
    private readonly channel: string,
    private readonly agent: string,
  ) {}

  get enabled(): boolean {
    return typeof this.adapter.stream === 'function';
  }

  show(textSoFar: string): void {
    if (this.off) return;
    const text = withoutWorldPass(stripSpeakerPrefix(this.agent, textSoFar)).trim();
    if (text.length < MIN_SHOWN) return;
    if (!this.post) {
      this.post = this.adapter.stream?.(this.channel, this.agent);
      if (!this.post) {
        this.off = true; // streaming is off for this platform
        return;
      }
    }
    this.post.update(text);
  }
}
