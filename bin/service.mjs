#!/usr/bin/env node
// `npm start`: the service, compiled JavaScript when built and current, else tsx (bin/runtime.mjs).
import { runEntry } from './runtime.mjs';

await runEntry('src/main');
