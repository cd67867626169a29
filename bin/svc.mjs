#!/usr/bin/env node
// The operators' and analysts' command line: runs the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
