import { once } from 'node:events';

/** Writes with back-pressure: a slow reader of a long output (a pipe, a file) holds the producer back instead of memory growing. */
export const writeLine = async (out: NodeJS.WritableStream, text: string): Promise<void> => {
  if (!out.write(text)) await once(out, 'drain');
};
