// How `npm start` and `svc` run: the compiled JavaScript in dist/ when `npm run build` made it and it is current,
// else the TypeScript sources through tsx (development). "Current" means dist/build-stamp.json exists and no file
// under src/ (nor tsconfig.json / tsconfig.build.json) was modified after that build started; where src/ is not
// shipped (the container image) the build is all there is. A build older than the sources is never run: the
// sources are, with one line on stderr saying why, so nobody debugs yesterday's code by mistake.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The most recently modified compiler input under `root`: { path, mtimeMs }, or undefined when there is none. */
const newestSource = (root) => {
  let newest;
  const consider = (path) => {
    const mtimeMs = statSync(path).mtimeMs;
    if (!newest || mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
  };
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) consider(path);
    }
  };
  walk(join(root, 'src'));
  for (const name of ['tsconfig.json', 'tsconfig.build.json']) if (existsSync(join(root, name))) consider(join(root, name));
  return newest;
};

/**
 * Which form to run from the package at `root`: { form: 'compiled' }, or { form: 'sources', stale? } where
 * `stale` names the source file newer than the build (absent when there is no build at all).
 */
export const chooseRuntime = (root = packageRoot) => {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, 'dist', 'build-stamp.json'), 'utf8'));
  } catch {
    return { form: 'sources' };
  }
  if (!existsSync(join(root, 'src'))) return { form: 'compiled' };
  const newest = newestSource(root);
  if (newest && !(newest.mtimeMs <= stamp.startedAt)) return { form: 'sources', stale: relative(root, newest.path) };
  return { form: 'compiled' };
};

/** Runs `entry` ('src/main', 'src/cli/main') in the form chooseRuntime picks. */
export const runEntry = async (entry) => {
  const choice = chooseRuntime();
  if (choice.form === 'compiled') return import(pathToFileURL(join(packageRoot, 'dist', `${entry}.js`)).href);
  if (choice.stale) {
    process.stderr.write(`dist/ is older than ${choice.stale}: running the TypeScript sources through tsx (npm run build to run the compiled form)\n`);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(join(packageRoot, `${entry}.ts`)).href);
};
