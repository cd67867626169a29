// `npm run build`: compiles src/ to runnable ESM JavaScript (dist/src/**/*.js, relative imports rewritten from
// .ts to .js by rewriteRelativeImportExtensions), copies the admin interface's files read at run time, and
// writes dist/build-stamp.json last. bin/runtime.mjs runs the compiled form only when that stamp exists and no
// source is newer than the build's start, so a failed or interrupted build never leaves stale code to run.
//   node scripts/build.mjs [--out <dir>]   (default dist; tests build into a temporary directory)
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string', default: 'dist' } } });
const out = resolve(root, values.out);
const stampFile = join(out, 'build-stamp.json');

// Taken before compiling: a source saved while tsc runs is newer than the stamp, so the build counts as stale.
const startedAt = Date.now();
// Only what this script writes is removed (never the whole --out directory, which a caller names).
rmSync(stampFile, { force: true });
rmSync(join(out, 'src'), { recursive: true, force: true });

// typescript's exports map hides bin/: find the package by its manifest, which it does export.
const typescriptDir = dirname(createRequire(import.meta.url).resolve('typescript/package.json'));
const tsc = join(typescriptDir, 'bin', 'tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) {
  process.stderr.write(`build failed (tsc exit ${compiled.status ?? compiled.signal}): no build stamp written, so npm start and svc keep running the sources through tsx\n`);
  process.exit(1);
}

// tsc emits only JavaScript; the admin interface reads its CSS and script beside its routes at run time.
const assets = 'src/http/admin-ui/assets';
mkdirSync(join(out, assets), { recursive: true });
cpSync(join(root, assets), join(out, assets), { recursive: true });

const typescript = JSON.parse(readFileSync(join(typescriptDir, 'package.json'), 'utf8')).version;
writeFileSync(stampFile, `${JSON.stringify({ startedAt, builtAt: Date.now(), typescript, node: process.version })}\n`);
process.stdout.write(`built ${out} (TypeScript ${typescript}, ${Date.now() - startedAt} ms)\n`);
