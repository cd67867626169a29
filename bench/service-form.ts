/**
 * Which form of the service the benchmarks run: the compiled JavaScript, as the container image
 * runs it (Dockerfile: `npm run build`, then `node dist/src/main.js`), built once per benchmark run
 * into `.bench-tmp/service-build-<pid>` (removed when the run ends; runs side by side each have
 * their own); or, with BENCH_FORM=sources, the TypeScript sources through tsx
 * (what `npm start` runs in a checkout with no current build). The sources cost more: esbuild's
 * keepNames wraps every function the code makes (closures made per event included) and each
 * worker thread loads tsx again; the rebuild benchmark over 200k events took 29.5 CPU-seconds and
 * 370 MB from the sources against 23.4-24.4 and 304-313 MB compiled.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type ServiceForm = { readonly form: 'compiled'; readonly root: string } | { readonly form: 'sources' };

const checkout = fileURLToPath(new URL('..', import.meta.url));
let chosen: ServiceForm | undefined;

/** The form, building it on first use (a failed build fails the run: it never falls back silently). */
export const serviceForm = (): ServiceForm => {
  if (chosen) return chosen;
  if (process.env.BENCH_FORM === 'sources') return (chosen = { form: 'sources' });
  if (process.env.BENCH_FORM !== undefined && process.env.BENCH_FORM !== 'compiled') throw new Error(`BENCH_FORM: expected compiled or sources, got ${process.env.BENCH_FORM}`);
  const root = fileURLToPath(new URL(`../.bench-tmp/service-build-${process.pid}`, import.meta.url));
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  const built = spawnSync(process.execPath, ['scripts/build.mjs', '--out', root], { cwd: checkout, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) throw new Error(`building the service for the benchmarks failed (exit ${built.status ?? built.signal})`);
  return (chosen = { form: 'compiled', root });
};

/** How to run a process of the service (a .mjs using bench/service-module.mjs) in that form: with tsx or not, and its environment. */
export const serviceProcess = (): { tsx: boolean; env: Record<string, string> } => {
  const form = serviceForm();
  return form.form === 'compiled' ? { tsx: false, env: { BENCH_SERVICE_ROOT: form.root } } : { tsx: true, env: {} };
};

/** The form this run's service processes ran in, if any ran. */
export const formUsed = (): ServiceForm['form'] | undefined => chosen?.form;
