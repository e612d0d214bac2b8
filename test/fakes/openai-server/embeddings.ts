/** Dimensions of the fake's vectors. */
export const FAKE_EMBEDDING_DIMENSIONS = 64;

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * A deterministic embedding: a hashed bag of words (each lower-cased word adds ±1 to one of 64 dimensions),
 * normalised. Texts that share words point the same way, so similarity search behaves as with a real model.
 */
export function fakeEmbedding(text: string): number[] {
  const vector = new Array<number>(FAKE_EMBEDDING_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const hash = fnv1a(word);
    const index = hash % FAKE_EMBEDDING_DIMENSIONS;
    vector[index] = (vector[index] ?? 0) + ((hash >>> 16) & 1 ? 1 : -1);
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

/** A float32 vector as OpenAI sends it with `encoding_format: "base64"` (little-endian bytes). */
export function base64Embedding(vector: readonly number[]): string {
  return Buffer.from(Float32Array.from(vector).buffer).toString('base64');
}
