/**
 * Runs `body` with JSON.parse counting the texts it is given that hold `mark` (test documents carry
 * it; compressed chunk documents and the service's own JSON do not), and puts JSON.parse back.
 */
export const countingParses = async <T>(mark: string, body: (count: () => number) => T | Promise<T>): Promise<T> => {
  const parse = JSON.parse;
  let n = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    if (typeof text === 'string' && text.includes(mark)) n++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    return await body(() => n);
  } finally {
    JSON.parse = parse;
  }
};

/**
 * Runs `body` with Buffer's toString counting the strings it makes that hold `mark`: a document's
 * text made a string of its own (test documents carry it; the service's own text does not).
 */
export const countingTexts = async <T>(mark: string, body: (count: () => number) => T | Promise<T>): Promise<T> => {
  const toString = Buffer.prototype.toString;
  let n = 0;
  Buffer.prototype.toString = function (this: Buffer, ...args: Parameters<Buffer['toString']>) {
    const text = toString.apply(this, args);
    if (text.includes(mark)) n++;
    return text;
  } as Buffer['toString'];
  try {
    return await body(() => n);
  } finally {
    Buffer.prototype.toString = toString;
  }
};
