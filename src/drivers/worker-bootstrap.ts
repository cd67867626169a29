/**
 * The code a worker thread (`new Worker(code, { eval: true })`) runs to load the module `name` beside
 * the module at `from`, whether the process runs the TypeScript sources (tsx) or compiled JavaScript.
 * A worker thread does not inherit the TypeScript loader of the thread that starts it: from the
 * sources it registers tsx first (as bin/svc.mjs does), then loads the worker module.
 */
export const workerBootstrap = (from: string, name: string): string => {
  const fromSources = from.endsWith('.ts');
  const file = JSON.stringify(new URL(`./${name}.${fromSources ? 'ts' : 'js'}`, from).href);
  return fromSources ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${file}); });` : `import(${file});`;
};
