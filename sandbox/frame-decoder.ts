/**
 * Splits Docker's multiplexed attach stream (8-byte header: stream type, 3 zero bytes,
 * big-endian payload length) into payloads. Only the unread part of one header is ever
 * buffered, so memory stays bounded however much a command prints.
 */
export class FrameDecoder {
  private header = Buffer.alloc(8);
  private headerFill = 0;
  private remaining = 0;

  /** `stream` is 1 for stdout, 2 for stderr. */
  constructor(private readonly onPayload: (payload: Buffer, stream: number) => void) {}

  write(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining > 0) {
        const end = Math.min(chunk.length, offset + this.remaining);
        this.onPayload(chunk.subarray(offset, end), this.header.readUInt8(0));
        this.remaining -= end - offset;
        offset = end;
        continue;
      }
      const take = Math.min(8 - this.headerFill, chunk.length - offset);
      chunk.copy(this.header, this.headerFill, offset, offset + take);
      this.headerFill += take;
      offset += take;
      if (this.headerFill === 8) {
        this.headerFill = 0;
        this.remaining = this.header.readUInt32BE(4);
      }
    }
  }
}
