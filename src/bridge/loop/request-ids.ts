/**
 * Request ids (`request_reply`), unique across rooms and, with bridges sharing the store, across bridges. One bridge
 * numbers them on from the highest stored. Bridges sharing a store each take blocks of fresh ids from it, and ask for
 * the next block while half of the current one is left, so a decision never waits for the database.
 */
import type { Logger } from '../../log.js';
import type { RequestIdBlocks } from '../../store/port.js';

/** The ids of a block not used (more than one decision opens): the next block is taken before them. */
const LAST_IDS = 64;

export class RequestIds {
  private nextId = 1;
  private end = Number.POSITIVE_INFINITY;
  private size = 0;
  private pending: Promise<void> | undefined;
  private spare: { first: number; count: number } | undefined;

  constructor(
    private readonly deps: {
      /** Blocks of ids from the store, with bridges sharing it; none: numbered on from the highest stored. */
      readonly blocks?: RequestIdBlocks | undefined;
      readonly log: Logger;
    },
  ) {}

  /** Before the first decision: numbering from `highest` + 1, or the first block. */
  async start(highest: () => Promise<number>): Promise<void> {
    const { blocks } = this.deps;
    if (!blocks) {
      this.nextId = Math.max(this.nextId, (await highest()) + 1);
      return;
    }
    this.use(await blocks.reserve());
  }

  /** The id the next request opened gets. */
  next(): number {
    return this.nextId;
  }

  /** A decision opened `count` requests. */
  took(count: number): void {
    this.nextId += count;
    if (!this.deps.blocks) return;
    // Near the end of a block the next one is taken, so no decision's ids run past it.
    if (this.end - this.nextId < LAST_IDS) {
      if (this.spare) this.use(this.spare);
      else if (this.nextId >= this.end) {
        this.deps.log.error(
          { next: this.nextId, end: this.end },
          "request ids ran past their block before the next one came: they may repeat another bridge's",
        );
      }
    }
    if (!this.spare && !this.pending && this.end - this.nextId <= this.size / 2) this.refill();
  }

  private use(block: { first: number; count: number }): void {
    this.spare = undefined;
    this.nextId = block.first;
    this.end = block.first + block.count;
    this.size = block.count;
  }

  private refill(): void {
    const { blocks, log } = this.deps;
    if (!blocks) return;
    this.pending = blocks
      .reserve()
      .then((block) => {
        this.spare = block;
        if (this.end - this.nextId < LAST_IDS) this.use(block);
      })
      .catch((error: unknown) => log.warn({ err: error }, 'a block of request ids could not be reserved; trying again'))
      .finally(() => {
        this.pending = undefined;
      });
  }
}
