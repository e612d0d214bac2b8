import { stripSpeakerPrefix } from '../llm/context.js';
import type { ChatAdapter, StreamingPost } from '../ports.js';

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
    const text = stripSpeakerPrefix(this.agent, textSoFar).trimStart();
    if (text.length < MIN_SHOWN || /<world>/i.test(text)) return;
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
