// Types of bin/runtime.mjs, which stays plain JavaScript: it runs before any TypeScript loader exists.
export type RuntimeChoice = { readonly form: 'compiled' } | { readonly form: 'sources'; readonly stale?: string };
export declare const chooseRuntime: (root?: string) => RuntimeChoice;
export declare const runEntry: (entry: string) => Promise<unknown>;
