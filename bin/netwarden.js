#!/usr/bin/env node
// `serve` starts with V8's young generation held at its initial size (src/young-generation.ts:
// start-up would otherwise leave it at 32 MB for good); the server releases it once it listens.
import { holdYoungGeneration } from '../dist/young-generation.js';

if (process.argv[2] === 'serve') holdYoungGeneration(`${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`);
await import('../dist/cli/main.js');
