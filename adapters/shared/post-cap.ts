/**
 * A reply's posts are capped (MAX_REPLY_POSTS): a 200 KB reply must not become a hundred messages in a room.
 * The chunks that fit are posted; the whole reply follows as a file where the platform allows it, else the
 * last post says how much was cut.
 */
export interface CappedPosts {
  /** The chunks to post as they are. */
  readonly chunks: readonly string[];
  /** Set when the reply was longer than the cap allows: the post that ends it, and the whole reply for a file. */
  readonly overflow?: { readonly note: string; readonly file: string; readonly cutNote: string } | undefined;
}

/** The name of the file a capped reply is attached as. */
export const REPLY_FILE_NAME = 'reply.md';

/**
 * At most `max` posts: the first `max - 1` chunks, then one post that ends the reply — with the whole reply
 * attached (`note`), or saying what was cut (`cutNote`) when no file can be attached.
 */
export function capPosts(chunks: readonly string[], max: number, whole: string): CappedPosts {
  if (chunks.length <= max) return { chunks };
  const shown = chunks.slice(0, Math.max(0, max - 1));
  const shownChars = shown.reduce((sum, chunk) => sum + chunk.length, 0);
  const left = Math.max(0, whole.length - shownChars);
  const size = `${left.toLocaleString('en-US')} more characters`;
  return {
    chunks: shown,
    overflow: {
      note: `… (${size}: the whole reply is attached as ${REPLY_FILE_NAME})`,
      file: whole,
      cutNote: `… [${size} cut: the reply was longer than ${max} messages]`,
    },
  };
}
