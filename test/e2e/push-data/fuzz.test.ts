/**
 * A seeded, deterministic fuzz test of push-data: thousands of malformed bodies (random bytes,
 * truncated JSON, wrong types, deep nesting, huge strings within the body limit, XML bombs,
 * broken TSV) and malformed control files (random mutations of valid ones). Nothing may give a 500
 * or a non-JSON body, and the store must not change: every fuzzed record ends with `abort-record`
 * (or cannot load its profile), and the only writes are the counted control-file changes.
 */
import { Agent, request as httpRequest } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { basic, issueKey } from '../../support/fixtures.ts';
import { EXAMPLE_CONTROL, control, defineApi, head, PUSH_DATA_USER, type Api, type Control } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const SEED = 0x5eed2024;
const LIMIT = 256 * 1024;
const BODIES = 1800;
const CONTROL_FILES = 600;
const MUTANTS_PUSHED = 30;
const PARALLEL = 4;
/** A request that takes longer than this fails the test (a hang must not hang the suite). */
const REQUEST_TIMEOUT_MS = 20_000;

// --------------------------------------------------------------------------------------------
// Deterministic randomness

/** mulberry32: a small seeded PRNG, so every run sends exactly the same requests. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
let random = prng(SEED);
const int = (n: number) => Math.floor(random() * n);
const chance = (p: number) => random() < p;
const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;

const ALPHABET = ['a', 'Z', '0', ' ', '-', ':', '"', "'", '\\', '<', '>', '&', ';', '\t', '\n', '\r', '\u0000', '\u0001', '\u007f', 'é', '漢', '\u{1f600}', '\ud800', '\ufeff', '%', '{', '[', ']', '}', ',', '='];
const randomString = (max = 24) => Array.from({ length: int(max) }, () => pick(ALPHABET)).join('');
const NASTY_STRINGS = [
  '', ' ', '0', '-1', '1e400', 'NaN', 'true', 'null', '__proto__', 'constructor', 'toString', 'svc:type:person', 'phd:type:project',
  'test:department:ghost', 'zzzzzzzzzzzz', '2021-02-30', '2021-13-45', '9999-99-99', 'yyyy-MM-dd', 'not an email', '@example.com', 'x@',
  'www.example.org', 'javascript:alert(1)', '+44 20 7946 0000', '978-3-16-148410-0', '00000000-0000-0000-0000-000000000000', 'nobody', 'NOBODY',
  'svc-data-import-api', '&amp;', '<![CDATA[x]]>', '%00', '\u0000', '\ud800\udc00',
];
const randomScalar = (): unknown => {
  switch (int(8)) {
    case 0: return null;
    case 1: return chance(0.5);
    case 2: return int(2000) - 1000;
    case 3: return pick([0, -0, 1.5, 1e308, -1e308, 2 ** 53 + 1, 0.1 + 0.2]);
    case 4: return pick(NASTY_STRINGS);
    default: return randomString();
  }
};
const randomJson = (depth = 0): unknown => {
  if (depth > 3 || chance(0.55)) return randomScalar();
  if (chance(0.5)) return Array.from({ length: int(5) }, () => randomJson(depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = int(5); i > 0; i--) o[chance(0.3) ? pick(FIELDS) : randomString(8)] = randomJson(depth + 1);
  return o;
};
const deepJson = (n: number) => (chance(0.5) ? `${'['.repeat(n)}${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`);

// --------------------------------------------------------------------------------------------
// The APIs fuzzed: every record ends with abort-record, so nothing can be committed

const TITLE = 'dc:attribute:title';
const FIELDS = ['ref', 'title', 'exams', 'progress', 'start', 'notes', 'isbn', 'uuid', 'postcode', 'extra', 'funded', 'thesis', 'supervisor', 'supervisorEmail', 'dept', 'deptCode', 'status', 'items', 'nested', 'flag', 'username', 'first', 'last', 'email', 'groups', 'orcid'];
const into = (source: string, name: string, extra: Record<string, unknown> = {}) => ({ source, destination: 'object', name, ...extra });
const ABORT = { action: 'abort-record', message: 'Fuzzed records are never committed' };
const PROJECT_INSTRUCTIONS = [
  { source: 'ref', destination: 'load:by-ref', name: 'ref', filters: ['svc:string-to-ref'] },
  { action: 'load', destination: 'object', using: 'load:by-ref', otherwise: [{ action: 'new', destination: 'object' }] },
  into('title', TITLE),
  into('exams', 'phd:attribute:exams-done'),
  into('progress', 'phd:attribute:progress'),
  into('start', 'phd:attribute:start-date', { dateFormat: 'yyyy-MM-dd' }),
  into('notes', 'phd:attribute:notes'),
  into('isbn', 'phd:attribute:isbn'),
  into('uuid', 'phd:attribute:uuid'),
  into('postcode', 'phd:attribute:postcode'),
  into('extra', 'phd:attribute:extra'),
  into('funded', 'phd:attribute:funded', { trueValue: 'yes' }),
  into('thesis', 'phd:attribute:thesis-file'),
  into('supervisor', 'phd:attribute:supervisor', { filters: ['svc:username-to-ref'] }),
  into('supervisorEmail', 'phd:attribute:supervisor', { filters: ['svc:email-to-ref'], multivalue: true }),
  into('dept', 'svc:attribute:department', { refMapping: 'departments' }),
  into('deptCode', 'svc:attribute:department', { filters: ['svc:code-to-ref'], multivalue: true }),
  into('status', TITLE, { mapInputValue: { a: 'Alpha', 1: 'One' }, mapInputValueDefault: 'Other', filters: ['svc:to-string', 'svc:to-upper-case', 'svc:fix-up-url', 'svc:to-lower-case'], multivalue: true }),
  { action: 'for-each', source: 'items', wrapValues: true, instructions: [into('value', 'phd:attribute:notes', { multivalue: true })] },
  { action: 'for-each', source: 'items', instructions: [into('title', TITLE, { multivalue: true, qualifier: 'svc:qualifier:alternative' })] },
  { action: 'within', source: 'nested', instructions: [into('title', TITLE, { multivalue: true }), { action: 'within', source: 'nested', instructions: [into('notes', 'phd:attribute:notes', { multivalue: true })] }] },
  { action: 'if-exists', source: 'flag', then: [{ action: 'log-error', message: 'flag exists' }] },
  { action: 'if-value-one-of', source: 'flag', values: [true, 'yes', 0], then: [{ action: 'log-error', message: 'flagged' }], else: [{ action: 'remove-values', destination: 'object', name: 'phd:attribute:isbn' }] },
  { action: 'if-has-value', destination: 'object', name: TITLE, else: [{ action: 'set-value', destination: 'object', name: TITLE, value: 'Default' }] },
  ABORT,
];
const MAPPING = { departments: { using: 'title', types: ['svc:type:department'], values: { PHY: 'Physics', a: 'A' } } };
const projectControl = (read: Record<string, unknown>) => control('TYPE:phd:type:project', PROJECT_INSTRUCTIONS, { mapping: MAPPING }, read);
const SYNC_INSTRUCTIONS = [
  { source: 'username', destination: 'user', name: 'username' },
  { source: 'first', destination: 'user', name: 'nameFirst' },
  { source: 'last', destination: 'user', name: 'nameLast' },
  { source: 'email', destination: 'user', name: 'email' },
  { action: 'for-each', source: 'groups', wrapValues: true, instructions: [{ source: 'value', destination: 'user', name: 'groups', multivalue: true }] },
  { source: 'orcid', destination: 'user:tags', name: 'orcid' },
  { source: 'first', destination: 'value:person-name', name: 'first' },
  { source: 'last', destination: 'value:person-name', name: 'last' },
  { action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: 'svc:attribute:name' },
  ABORT,
];
/** The contract example: with no user profiles in this store, its load always fails. */
const EXAMPLE = control('svc:person', EXAMPLE_CONTROL.instructions);
const BASE_CONTROLS: readonly Control[] = [
  projectControl({ read: 'json' }),
  projectControl({ read: 'xml-text-of-children', singleRecord: true }),
  projectControl({ read: 'tsv-with-name-row', separator: ',', charset: 'iso-8859-1' }),
  control('svc:user-sync', SYNC_INSTRUCTIONS, {}, { read: 'json' }),
  EXAMPLE,
];

// --------------------------------------------------------------------------------------------
// Body generators

const template = (): Record<string, unknown> => ({
  ref: pick(['zzzzzzzzzzzz', 'not a ref', '']),
  title: 'Fuzz title',
  exams: '3',
  progress: '0.5',
  start: '2021-03-04',
  notes: 'Notes',
  isbn: '978-3-16-148410-0',
  uuid: '00000000-0000-0000-0000-000000000000',
  postcode: 'OX1 2JD',
  extra: { a: [1, 2] },
  funded: 'scheme-a',
  thesis: { digest: 'a'.repeat(64), fileSize: 3 },
  supervisor: 'nobody',
  supervisorEmail: 'nobody@example.com',
  dept: 'PHY',
  deptCode: 'test:department:ghost',
  status: 'a',
  items: ['x', { title: 'Item' }],
  nested: { title: 'Nested', nested: { notes: 'Deeper' } },
  flag: true,
  username: 'nobody',
  first: 'No',
  last: 'Body',
  email: 'nobody@example.com',
  groups: ['test:group:nope'],
  orcid: '0000',
});
const wrongTypes = () => {
  const r = template();
  for (const k of Object.keys(r)) if (chance(0.5)) r[k] = randomJson();
  if (chance(0.2)) r[pick(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])] = randomJson();
  return r;
};
const flipBytes = (text: string) => {
  const b = Buffer.from(text);
  for (let i = 1 + int(4); i > 0 && b.length; i--) b[int(b.length)] = int(256);
  return b;
};
/** Up to 200 KB of text (the body limit is 256 KB). */
const hugeString = () => (chance(0.5) ? 'x'.repeat(20_000 + int(180_000)) : randomString(40).repeat(1000).slice(0, 40_000));

/** Bodies stay within the limit (a larger one is cut), so the 413 path is not what is fuzzed here. */
const withinLimit = (body: string | Buffer): string | Buffer => {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return bytes.length <= LIMIT ? body : bytes.subarray(0, LIMIT - int(1000));
};

const jsonBody = (): string | Buffer => {
  switch (int(11)) {
    case 0: return Buffer.from(Array.from({ length: int(600) }, () => int(256)));
    case 1: { const t = JSON.stringify(chance(0.5) ? [template(), template()] : template()); return t.slice(0, int(t.length)); }
    case 2: return JSON.stringify(chance(0.5) ? wrongTypes() : [wrongTypes(), wrongTypes()]);
    case 3: return JSON.stringify(randomJson());
    case 4: { const n = pick([200, 2_000, 10_000, 40_000]); return chance(0.5) ? deepJson(n) : `[{"title":"deep","extra":${deepJson(n)},"nested":${deepJson(Math.min(n, 5_000))}}]`; }
    case 5: { const r = template(); r[pick(FIELDS)] = hugeString(); return JSON.stringify(chance(0.5) ? r : [r]); }
    case 6: return JSON.stringify(Array.from({ length: 10 + int(60) }, () => (chance(0.8) ? wrongTypes() : template())));
    case 7: return flipBytes(JSON.stringify([template()]));
    case 8: return JSON.stringify([{ [hugeString().slice(0, 60_000)]: 'huge key' }, {}, [], null]);
    case 9: return pick(['', ' ', 'null', '[]', '{}', '[[]]', '"string"', '1', 'true', '[1,2,3]', '[null]', '\ufeff[]', '[{}]', '{"a":1}{"b":2}']);
    default: return `${JSON.stringify(template())}${randomString(10)}`;
  }
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const xmlRecords = (n: number) =>
  Array.from({ length: n }, () => `<record>${Object.entries(template()).map(([k, v]) => `<${k}>${esc(typeof v === 'string' ? v : JSON.stringify(v))}</${k}>`).join('')}</record>`).join('');
const xmlBody = (): string | Buffer => {
  switch (int(13)) {
    case 0: {
      const levels = 3 + int(8);
      const entities = Array.from({ length: levels }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
      return `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">${entities}]><records><record><title>&lol${levels};</title></record></records>`;
    }
    case 1: return `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><records><record><title>&xxe;</title></record></records>`;
    case 2: return `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:9/evil.dtd"> %p;]><records/>`;
    case 3: { const n = pick([100, 5_000, 20_000]); return `${'<a>'.repeat(n)}x${'</a>'.repeat(n)}`; }
    case 4: return `<records><record title="${'y'.repeat(100_000 + int(50_000))}"><title>${'z'.repeat(int(50_000))}</title></record></records>`;
    case 5: { const t = `<?xml version="1.0"?><records>${xmlRecords(3)}</records>`; return t.slice(0, int(t.length)); }
    case 6: return Buffer.concat([Buffer.from(`<?xml version="1.0" encoding="${pick(['UTF-16', 'bogus-charset', 'ISO-8859-1', 'utf-32', ''])}"?>`), Buffer.from(Array.from({ length: int(400) }, () => int(256)))]);
    case 7: return `<records>${xmlRecords(10 + int(60))}</records>`;
    case 8: return `<records><record><title>${pick(['&undefined;', '&#0;', '&#xD800;', '&#99999999;', '&#x;', '&', '&amp', '<![CDATA[', ']]>'])}</title></record></records>`;
    case 9: return flipBytes(`<records>${xmlRecords(2)}</records>`);
    case 10: return `<records><record ${Array.from({ length: 300 }, (_, i) => `a${i}="${randomString(10).replace(/["<&]/g, '')}"`).join(' ')}/></records>`;
    case 11: return pick(['', '<', '<>', '<a', '<a/><b/>', '<?xml version="1.0"?>', '<!-- only a comment -->', '<a xmlns:x="urn:x"><x:b>1</x:b></a>', '\ufeff<a/>']);
    default: return jsonBody();
  }
};
const tsvBody = (): string | Buffer => {
  switch (int(6)) {
    case 0: return Array.from({ length: 1 + int(150) }, () => Array.from({ length: int(30) }, () => randomString(12)).join(pick(['\t', ',']))).join(pick(['\n', '\r\n', '\r']));
    case 1: return `${FIELDS.join(',')}\n${Array.from({ length: 10 + int(60) }, () => FIELDS.map(() => randomString(6).replace(/[,\r\n]/g, '')).join(',')).join('\n')}`;
    case 2: return Buffer.from(Array.from({ length: int(2000) }, () => int(256)));
    case 3: return `title\n${hugeString()}`;
    case 4: return `${Array.from({ length: 5000 }, (_, i) => `c${i}`).join(',')}\n${'v,'.repeat(5000)}`;
    default: return jsonBody();
  }
};

// --------------------------------------------------------------------------------------------
// Control-file mutations

type Json = unknown;
const paths = (root: Json): (string | number)[][] => {
  const out: (string | number)[][] = [];
  const stack: [Json, (string | number)[]][] = [[root, []]];
  while (stack.length) {
    const [v, p] = stack.pop()!;
    out.push(p);
    if (Array.isArray(v)) v.forEach((c, i) => stack.push([c, [...p, i]]));
    else if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) stack.push([c, [...p, k]]);
  }
  return out;
};
const ACTIONS = ['field', 'field-structured', 'set-value', 'remove-values', 'if-exists', 'if-value-one-of', 'if-has-value', 'within', 'for-each', 'new', 'load', 'assert-destination', 'abort-record', 'log-error', 'set-attribute-group', 'bogus', '', 'FIELD'];
const randomInstruction = (depth = 0): Record<string, unknown> => {
  const i: Record<string, unknown> = { action: pick(ACTIONS) };
  for (const k of ['source', 'destination', 'name', 'value', 'values', 'then', 'else', 'instructions', 'using', 'otherwise', 'exists', 'message', 'multivalue', 'qualifier', 'filters', 'structured', 'dateFormat', 'refMapping', 'mapInputValue', 'wrapValues', 'country']) {
    if (!chance(0.25)) continue;
    const choice = int(4);
    i[k] =
      choice === 0 ? randomJson()
      : choice === 1 ? pick(['object', 'profile', 'phd:project', 'user', 'user:tags', 'load:by-ref', 'value:person-name', 'value:postal-address', TITLE, 'phd:attribute:start-date', 'svc:attribute:department', 'username', 'groups', 'ref'])
      : choice === 2 && depth < 3 ? [randomInstruction(depth + 1)]
      : [];
  }
  return i;
};
const mutate = (base: Control): Json => {
  let doc: Json = structuredClone(base);
  for (let n = 1 + int(3); n > 0; n--) {
    const all = paths(doc);
    const path = pick(all);
    if (path.length === 0) {
      if (chance(0.3)) doc = randomJson();
      continue;
    }
    const parentPath = path.slice(0, -1);
    const key = path[path.length - 1]!;
    let parent = doc as Record<string | number, Json>;
    for (const k of parentPath) parent = parent[k] as Record<string | number, Json>;
    switch (int(7)) {
      case 0:
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key];
        break;
      case 1: parent[key] = randomJson(); break;
      case 2: parent[key] = JSON.parse(deepJson(20 + int(150))); break;
      case 3: if (Array.isArray(parent)) parent.splice(key as number, 0, randomInstruction()); else parent[key] = [randomInstruction()]; break;
      case 4: parent[key] = pick(ACTIONS); break;
      case 5: if (!Array.isArray(parent)) { const v = parent[key]; delete parent[key]; parent[pick([...FIELDS, 'action', 'model', 'files', 'read', 'singleRecord', randomString(6)])] = v; } break;
      default: parent[key] = pick(['svc:person', 'svc:user-sync', 'TYPE:svc:type:department', 'TYPE:phd:type:project', 'json', 'xml-attributes', 'DEFAULT', 0, true, null, {}, []]);
    }
  }
  return doc;
};

// --------------------------------------------------------------------------------------------

interface Ctx {
  svc: TestService;
  json: Api;
  single: Api;
  xml: Api;
  attrs: Api;
  tsv: Api;
  sync: Api;
  example: Api;
  mutant: Api;
  anyKey: string;
}
const test = suite<Ctx>('Push data: fuzz (seeded)', {} as Ctx);

test.before(async (ctx) => {
  random = prng(SEED);
  ctx.svc = await startTestService({ SVC_BODY_LIMIT: String(LIMIT) });
  ctx.json = await defineApi(ctx.svc, projectControl({ read: 'json' }), { url: 'fuzz-json' });
  ctx.single = await defineApi(ctx.svc, projectControl({ read: 'json', singleRecord: true }), { url: 'fuzz-single' });
  ctx.xml = await defineApi(ctx.svc, projectControl({ read: 'xml-text-of-children' }), { url: 'fuzz-xml' });
  ctx.attrs = await defineApi(ctx.svc, projectControl({ read: 'xml-attributes', singleRecord: true }), { url: 'fuzz-attrs' });
  ctx.tsv = await defineApi(ctx.svc, projectControl({ read: 'tsv-with-name-row', separator: ',' }), { url: 'fuzz-tsv' });
  ctx.sync = await defineApi(ctx.svc, control('svc:user-sync', SYNC_INSTRUCTIONS, {}, { read: 'json' }), { url: 'fuzz-sync' });
  ctx.example = await defineApi(ctx.svc, EXAMPLE, { url: 'fuzz-example' });
  ctx.mutant = await defineApi(ctx.svc, projectControl({ read: 'json' }), { url: 'fuzz-mutant' });
  ctx.anyKey = (await issueKey(ctx.svc, PUSH_DATA_USER, { path: '/api/push-data/' })).key;
});
test.after(async (ctx) => {
  agent.destroy();
  await ctx.svc?.stop();
});
if (process.env.FUZZ_DEBUG) {
  let t = 0;
  test.before.each(() => {
    t = Date.now();
  });
  test.after.each(() => {
    process.stderr.write(`FUZZ_TIMING ${Date.now() - t} ms\n`);
  });
}

/** Runs the tasks with a few in flight at once (the tasks, not their order, are what is seeded). */
const pool = async <T>(tasks: (() => Promise<T>)[], width = PARALLEL): Promise<T[]> => {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]!();
      }
    }),
  );
  return results;
};

/** With FUZZ_DEBUG set: the time of every request, summarised after the bodies test. */
const timings: [number, string][] = [];
const reportTimings = () => {
  if (!process.env.FUZZ_DEBUG) return;
  const byTarget = new Map<string, [number, number]>();
  for (const [ms, what] of timings) {
    const key = /to (\S+):/.exec(what)?.[1] ?? what.split(' ')[0]!;
    const [n, sum] = byTarget.get(key) ?? [0, 0];
    byTarget.set(key, [n + 1, sum + ms]);
  }
  process.stderr.write(`TIMINGS ${JSON.stringify([...byTarget])}\n`);
  for (const [ms, what] of [...timings].sort((a, b) => b[0] - a[0]).slice(0, 15)) process.stderr.write(`  ${ms} ms ${what}\n`);
  timings.length = 0;
};

interface Answer {
  readonly what: string;
  readonly status: number;
  readonly body: any;
}
/** A lean keep-alive HTTP client (thousands of requests: fetch's own overhead would dominate). */
const agent = new Agent({ keepAlive: true, maxSockets: PARALLEL });
const send = (svc: TestService, path: string, init: { method?: string; body?: string | Buffer; headers?: Record<string, string>; admin?: boolean }) =>
  new Promise<{ status: number; contentType: string; text: string }>((resolve, reject) => {
    const headers: Record<string, string> = { ...(init.admin === false ? {} : { Authorization: `Bearer ${svc.adminToken}` }), ...init.headers };
    if (init.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(init.body));
    const req = httpRequest(`${svc.url}${path}`, { method: init.method ?? 'GET', headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(init.body);
  });

/** A request whose answer must be JSON and not a server error; returns the parsed body. */
const request = async (svc: TestService, what: string, path: string, init: { method?: string; body?: string | Buffer; headers?: Record<string, string>; admin?: boolean }): Promise<Answer> => {
  let res: { status: number; contentType: string; text: string };
  const started = Date.now();
  try {
    res = await send(svc, path, init);
  } catch (e) {
    throw new Error(`${what}: request failed after ${Date.now() - started} ms: ${(e as Error).message}`);
  }
  const text = res.text;
  if (process.env.FUZZ_DEBUG) timings.push([Date.now() - started, what.slice(0, 120)]);
  assert.ok(res.status < 500, `${what}: status ${res.status}: ${text.slice(0, 300)}`);
  assert.match(res.contentType, 'application/json', `${what}: not JSON (${res.status}): ${text.slice(0, 200)}`);
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    assert.unreachable(`${what}: body is not JSON: ${text.slice(0, 200)}`);
  }
  return { what, status: res.status, body };
};

/** A push-data answer: the push-data shape, never applied (fuzzed records cannot be committed). */
const checkPush = (a: Answer) => {
  assert.ok(a.status === 200 || a.status === 400, `${a.what}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
  assert.ok(['success', 'failure', 'error'].includes(a.body.result), `${a.what}: result ${a.body.result}`);
  assert.is(a.status === 200, a.body.result === 'success', `${a.what}: status matches result`);
  assert.is(a.body.applied, 0, `${a.what}: nothing applied: ${JSON.stringify(a.body).slice(0, 400)}`);
  assert.ok(Array.isArray(a.body.errors) && a.body.errors.every((e: unknown) => typeof e === 'string'), `${a.what}: errors are strings`);
  assert.ok(a.body.errors.length <= 500, `${a.what}: at most 500 errors are reported`);
  assert.ok(a.body.errorCount >= 0 && Number.isInteger(a.body.errorCount), a.what);
  assert.ok(Array.isArray(a.body.actions) && a.body.actions.every((r: any) => Array.isArray(r.changed) && r.changed.length === 0), `${a.what}: no saves`);
};

const pushTo = (svc: TestService, api: { url: string; key: string }, body: string | Buffer, what: string, headers: Record<string, string> = {}) =>
  request(svc, what, `/api/push-data/${api.url}`, { admin: false, method: 'POST', body, headers: { Authorization: basic(api.key), ...headers } });

test('thousands of malformed bodies: no 500, always JSON, nothing applied, nothing written', async (ctx) => {
  random = prng(SEED);
  const before = await head(ctx.svc);
  const targets: [Api, () => string | Buffer][] = [
    [ctx.json, jsonBody], [ctx.single, jsonBody], [ctx.sync, jsonBody], [ctx.example, jsonBody],
    [ctx.xml, xmlBody], [ctx.attrs, xmlBody], [ctx.tsv, tsvBody],
  ];
  // Each body comes from its own seed, generated just before it is sent: the same bodies whatever
  // the interleaving, and no long pause (a pause longer than the keep-alive timeout makes idle
  // connections race with new requests).
  const tasks = Array.from({ length: BODIES }, (_, i) => () => {
    random = prng(SEED + 1000 + i);
    const [api, make] = pick(targets);
    const body = withinLimit(make());
    const headers: Record<string, string> = chance(0.1) ? { 'Content-Type': pick(['application/json', 'text/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain; charset=bogus']) } : {};
    return pushTo(ctx.svc, api, body, `body ${i} to ${api.url}: ${String(body).slice(0, 80)}`, headers);
  });
  const answers = await pool(tasks);
  answers.forEach(checkPush);
  const results = new Map<string, number>();
  for (const a of answers) results.set(`${a.status} ${a.body.result ?? a.body.kind}`, (results.get(`${a.status} ${a.body.result ?? a.body.kind}`) ?? 0) + 1);
  assert.ok((results.get('400 error') ?? 0) > BODIES / 10, `many bodies are refused outright: ${JSON.stringify([...results])}`);
  assert.ok((results.get('400 failure') ?? 0) > BODIES / 10, `many records are read and then fail: ${JSON.stringify([...results])}`);
  reportTimings();
  for (const a of answers.filter((x) => x.body.errorCount >= 500)) assert.is(a.body.errors[499], 'Too many errors in import batch, no further errors will be reported', a.what);
  assert.is(await head(ctx.svc), before, 'the store is unchanged');
});

test('a batch with more than 500 errors reports 499 of them, then the notice, and counts them all', async (ctx) => {
  random = prng(SEED + 4);
  const before = await head(ctx.svc);
  const records = Array.from({ length: 600 }, () => ({ exams: 'not a number' }));
  const a = await pushTo(ctx.svc, ctx.json, JSON.stringify(records), 'error cap');
  checkPush(a);
  assert.is(a.body.result, 'failure');
  assert.is(a.body.failures, 600);
  assert.is(a.body.errors.length, 500);
  assert.ok(a.body.errorCount >= 1200, `every error is counted: ${a.body.errorCount}`);
  assert.equal(a.body.errors.slice(0, 2), ['Invalid integer for input field exams: not a number (record 0)', 'Fuzzed records are never committed (record 0)']);
  assert.ok(a.body.errors.slice(0, 499).every((e: string) => / \(record \d+\)$/.test(e)));
  assert.is(a.body.errors[499], 'Too many errors in import batch, no further errors will be reported');
  assert.is(await head(ctx.svc), before);
});

test('odd paths, methods and headers on the push endpoint: no 500, always JSON', async (ctx) => {
  random = prng(SEED + 1);
  const before = await head(ctx.svc);
  const paths = ['%', '%E0%A4%A', '..', 'a%00b', '%2e%2e', 'FUZZ-JSON', 'fuzz-json%2F', encodeURIComponent('漢字'), 'x'.repeat(2000), 'fuzz-json;x=1'];
  const answers: Answer[] = [];
  for (const p of paths) {
    answers.push(await request(ctx.svc, `path ${p}`, `/api/push-data/${p}`, { admin: false, method: 'POST', body: '{}', headers: { Authorization: basic(ctx.anyKey) } }));
  }
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    answers.push(await request(ctx.svc, `method ${method}`, `/api/push-data/${ctx.json.url}`, { admin: false, method, headers: { Authorization: basic(ctx.json.key) } }));
  }
  for (const key of ['x'.repeat(256), '', ' ', 'a b']) {
    answers.push(await pushTo(ctx.svc, ctx.json, '[]', `idempotency key ${JSON.stringify(key.slice(0, 10))}`, { 'Idempotency-Key': key }));
  }
  for (const auth of ['Basic', 'Basic !!!', `Basic ${Buffer.from('svc:').toString('base64')}`, `Bearer ${ctx.json.key}`, basic(ctx.json.key, 'haplo'), basic(`${ctx.json.key}x`)]) {
    answers.push(await request(ctx.svc, `auth ${auth.slice(0, 12)}`, `/api/push-data/${ctx.json.url}`, { admin: false, method: 'POST', body: '[]', headers: { Authorization: auth } }));
  }
  for (const a of answers) assert.ok([200, 400, 401, 403, 404, 405].includes(a.status), `${a.what}: ${a.status} ${JSON.stringify(a.body)}`);
  assert.is(await head(ctx.svc), before);
});

test('hundreds of mutated control files: refused with JSON (400) or valid (409 on a used url), never 500; valid ones run safely', async (ctx) => {
  random = prng(SEED + 2);
  const before = await head(ctx.svc);
  const apisBefore = (await (await ctx.svc.request('/api/admin/rest-apis')).json()) as { restApis: unknown[] };
  const tasks = Array.from({ length: CONTROL_FILES }, (_, i) => {
    random = prng(SEED + 100_000 + i);
    const base = pick(BASE_CONTROLS);
    const mutated = mutate(base);
    let raw: string;
    const url = chance(0.9) ? ctx.json.url : pick(['Bad URL', '', 'a/b', 'ÄPI', 'x'.repeat(300) + ' ']);
    const definition: Record<string, unknown> = { url, description: chance(0.95) ? 'Fuzzed' : randomJson(), controlFile: mutated };
    if (chance(0.1)) definition.enabled = randomScalar();
    if (chance(0.1)) definition.response = pick(['JSON', 'XML', 'json', 'CSV', 1]);
    if (chance(0.1)) definition.controlFile = JSON.stringify(mutated).slice(0, chance(0.5) ? undefined : int(400));
    raw = JSON.stringify(definition);
    if (chance(0.05)) raw = raw.slice(0, int(raw.length));
    return async () => {
      const a = await request(ctx.svc, `control ${i}: ${raw.slice(0, 200)}`, '/api/admin/rest-apis', { method: 'POST', body: raw, headers: { 'Content-Type': 'application/json' } });
      assert.ok(a.status === 400 || a.status === 409, `${a.what}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
      assert.is(a.body.success, false, a.what);
      assert.type(a.body.kind, 'string');
      assert.type(a.body.error?.message, 'string');
      if (a.body.kind === 'svc:rest-api:invalid-control-file') {
        assert.ok(Array.isArray(a.body.errors) && a.body.errors.length > 0 && a.body.errors.every((e: unknown) => typeof e === 'string'), a.what);
        assert.ok(a.body.error.message === 'Invalid JSON, check syntax' || a.body.error.message === `Not a valid control file: ${a.body.errors.join(', ')}`, a.what);
      }
      if (a.status !== 409) return { a };
      assert.is(a.body.error.message, 'URL is already in use.');
      const c = definition.controlFile;
      return { a, valid: (typeof c === 'string' ? JSON.parse(c) : c) as Control };
    };
  });
  const results = await pool(tasks);
  const answers = results.map((r) => r.a);
  const valid = results.flatMap((r) => (r.valid ? [r.valid] : []));
  assert.ok(answers.filter((a) => a.body.kind === 'svc:rest-api:invalid-control-file').length > CONTROL_FILES / 3, 'most mutants are invalid');
  assert.ok(valid.length > 10, `some mutants are still valid (${valid.length})`);
  assert.is(await head(ctx.svc), before, 'refused definitions write nothing');
  const apisAfter = (await (await ctx.svc.request('/api/admin/rest-apis')).json()) as { restApis: unknown[] };
  assert.equal(apisAfter, apisBefore);

  // Valid mutants, with abort-record appended, run as a real API on fuzzed bodies. Each change of
  // the definition is exactly one event; the pushes write nothing.
  let stored = JSON.stringify(projectControl({ read: 'json' }));
  const mutant = { url: ctx.mutant.url, key: ctx.mutant.key };
  random = prng(SEED + 3);
  for (const [i, c] of valid.slice(0, MUTANTS_PUSHED).entries()) {
    const controlFile: Control = { ...c, instructions: [...(c.instructions as unknown[]), ABORT] };
    const start = await head(ctx.svc);
    const put = await request(ctx.svc, `mutant ${i}`, `/api/admin/rest-apis/${mutant.url}`, { method: 'PUT', body: JSON.stringify({ controlFile }), headers: { 'Content-Type': 'application/json' } });
    assert.is(put.status, 200, `${put.what}: ${JSON.stringify(put.body).slice(0, 400)}`);
    const expected = JSON.stringify(controlFile) === stored ? 0 : 1;
    stored = JSON.stringify(controlFile);
    assert.is((await head(ctx.svc)) - start, expected, `mutant ${i}: one event per change`);
    const reads = controlFile.files as Record<string, { read?: string }>;
    const reader = (reads.body ?? reads.DEFAULT)?.read;
    for (let j = 0; j < 3; j++) {
      const body = withinLimit(reader?.startsWith('xml') ? xmlBody() : reader === 'tsv-with-name-row' ? tsvBody() : jsonBody());
      checkPush(await pushTo(ctx.svc, mutant, body, `mutant ${i} body ${j}: ${JSON.stringify(controlFile).slice(0, 300)}`));
    }
    assert.is(await head(ctx.svc), start + expected, `mutant ${i}: pushes wrote nothing`);
  }
});

test.run();
