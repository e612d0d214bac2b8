/** Vectors as the stores keep them: float32 BLOBs (little-endian, the platform's order), and the exact scan. */

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** Copies out of the driver's buffer: a Float32Array needs 4-byte alignment. */
export function fromBlob(blob: Uint8Array): Float32Array {
  return new Float32Array(new Uint8Array(blob).buffer);
}

/** The `limit` rows most like `query`, most similar first (an exact scan: every row is scored). */
export function nearest<T extends { readonly vector: Uint8Array }>(
  rows: Iterable<T>,
  query: Float32Array,
  limit: number,
): Array<{ row: T; score: number }> {
  const best: Array<{ row: T; score: number }> = [];
  for (const row of rows) {
    const score = cosine(query, fromBlob(row.vector));
    if (best.length === limit && score <= (best.at(-1)?.score ?? -Infinity)) continue;
    let at = best.length;
    while (at > 0 && (best[at - 1]?.score ?? 0) < score) at--;
    best.splice(at, 0, { row, score });
    if (best.length > limit) best.pop();
  }
  return best;
}
