#!/usr/bin/env node
// The operators' and analysts' command line: compiled JavaScript when built and current, else tsx (bin/runtime.mjs).
import { runEntry } from './runtime.mjs';

await runEntry('src/cli/main');
