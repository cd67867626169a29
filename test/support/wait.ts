export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `cond`, bounded (a busy machine is slow, never this slow). */
export const until = async (cond: () => boolean, what: string, ms = 30_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
};
