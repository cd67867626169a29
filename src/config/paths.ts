import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding package.json, whether running from src/ (tsx) or dist/src/ (compiled). */
const findRoot = (from: string): string => {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
  return dir;
};

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
export const configFile = (name: string) => resolve(projectRoot, 'config', name);
