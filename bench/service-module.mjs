// A module of the service, in the form the benchmark runs (bench/service-form.ts): from
// BENCH_SERVICE_ROOT, a build's directory holding `src/**/*.js` (compiled), or, unset, this
// checkout's TypeScript sources (the process must then run with `--import tsx`).
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = process.env.BENCH_SERVICE_ROOT;
const sources = join(fileURLToPath(new URL('.', import.meta.url)), '..');

/** Loads `<root>/<path>.js`, or `<checkout>/<path>.ts` from the sources. */
export const serviceModule = (path) => import(pathToFileURL(root ? join(root, `${path}.js`) : join(sources, `${path}.ts`)).href);
serviceModule.form = root ? 'compiled' : 'sources';
