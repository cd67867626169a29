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
    /** Where each text starts and ends in `bytes`. */
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
    private readonly encoding: 'latin1' | 'utf8',
  ) {}

  /**
   * The texts at `ranges` of `source` (start and end of each, in turn), copied into a block of
   * their own. Text in `source` is UTF-8, or `latin1` where it is all ASCII (copied the faster way).
   * Texts side by side in `source` (lines one newline apart, as a chunk's documents are) are copied
   * in one stretch with the newlines between them: a copy per text was most of the cost of cutting
   * a chunk, tens of thousands of calls for a chain, for a byte a text.
   */
  static copy(source: Buffer, encoding: 'latin1' | 'utf8', ranges: readonly number[]): TextBlock {
    const count = ranges.length / 2;
    /** Whether the `i`th text starts right after the newline that ends the one before it in `source`. */
    const follows = (i: number) => i > 0 && ranges[2 * i]! === ranges[2 * i - 1]! + 1;
    const starts = new Int32Array(count);
    const ends = new Int32Array(count);
    let size = 0;
    for (let i = 0; i < count; i++) {
      if (follows(i)) size++;
      starts[i] = size;
      ends[i] = size += ranges[2 * i + 1]! - ranges[2 * i]!;
    }
    // Not from Buffer's shared pool: a small block would keep the pool's other users' bytes alive.
    const bytes = Buffer.allocUnsafeSlow(size);
    for (let i = 0; i < count; ) {
      let last = i;
      while (last + 1 < count && follows(last + 1)) last++;
      source.copy(bytes, starts[i]!, ranges[2 * i]!, ranges[2 * last + 1]!);
      i = last + 1;
    }
    return new TextBlock(bytes, starts, ends, encoding);
  }

  /** The `i`th text, made a string. */
  text(i: number): string {
    return this.bytes.toString(this.encoding, this.starts[i], this.ends[i]);
  }

  /** Bytes of the `i`th text. */
  size(i: number): number {
    return this.ends[i]! - this.starts[i]!;
  }
}
