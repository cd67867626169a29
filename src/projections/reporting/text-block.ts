/**
 * Texts of documents loaded together, side by side in one buffer outside V8's heap, each made a
 * string only when it is read. Loading a chain as strings made one for every document of the
 * state, which the collector then copied (each survives) while an answer read mostly others: over
 * a 1M-event history, materialising them took about a third of a cold load's time. A block holds
 * only the texts it was made with (a chunk's entries that newer links override are left behind),
 * and is freed with the last of its documents.
 */
export class TextBlock {
  private constructor(
    private readonly bytes: Buffer,
    /** Where each text ends in `bytes` (each starts where the one before it ends). */
    private readonly ends: Int32Array,
    private readonly encoding: 'latin1' | 'utf8',
  ) {}

  /**
   * The texts at `ranges` of `source` (start and end of each, in turn), copied into a block of
   * their own. Text in `source` is UTF-8, or `latin1` where it is all ASCII (copied the faster way).
   */
  static copy(source: Buffer, encoding: 'latin1' | 'utf8', ranges: readonly number[]): TextBlock {
    const count = ranges.length / 2;
    const ends = new Int32Array(count);
    let size = 0;
    for (let i = 0; i < count; i++) ends[i] = size += ranges[2 * i + 1]! - ranges[2 * i]!;
    // Not from Buffer's shared pool: a small block would keep the pool's other users' bytes alive.
    const bytes = Buffer.allocUnsafeSlow(size);
    const block = new TextBlock(bytes, ends, encoding);
    for (let i = 0; i < count; i++) source.copy(bytes, block.start(i), ranges[2 * i]!, ranges[2 * i + 1]!);
    return block;
  }

  /** The `i`th text, made a string. */
  text(i: number): string {
    return this.bytes.toString(this.encoding, this.start(i), this.ends[i]);
  }

  /** Bytes of the `i`th text. */
  size(i: number): number {
    return this.ends[i]! - this.start(i);
  }

  private start(i: number): number {
    return i ? this.ends[i - 1]! : 0;
  }
}
