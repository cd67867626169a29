/** Runs the calls made for one key one after the other, in the order made (a failed one does not stop the next). */
export class OneAtATime {
  private readonly running = new Map<string, Promise<unknown>>();

  run<T>(key: string, call: () => Promise<T>): Promise<T> {
    const before = this.running.get(key);
    const mine = (async () => {
      await before?.catch(() => undefined);
      return call();
    })();
    this.running.set(key, mine);
    const done = () => {
      if (this.running.get(key) === mine) this.running.delete(key);
    };
    mine.then(done, done);
    return mine;
  }
}
