import * as assert from 'uvu/assert';

/** One scrape in Prometheus's text format: a sample's value by name and labels (all of them, any order). */
export interface Scrape {
  readonly text: string;
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample of `name` (label sets with their values). */
  samples(name: string): { labels: Record<string, string>; value: number }[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export const parseScrape = (text: string): Scrape => {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const same = (a: Record<string, string>, b: Record<string, string>) => Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
  return {
    text,
    value: (name, labels = {}) => samples.find((s) => s.name === name && same(s.labels, labels))?.value,
    samples: (name) => samples.filter((s) => s.name === name).map(({ labels, value }) => ({ labels, value })),
  };
};

/** GET /metrics (200 expected) and parse it. */
export const scrape = async (request: (path: string, init?: RequestInit & { admin?: boolean }) => Promise<Response>, headers: Record<string, string> = {}): Promise<Scrape> => {
  const res = await request('/metrics', { admin: false, headers });
  const text = await res.text();
  assert.is(res.status, 200, text);
  assert.match(res.headers.get('content-type') ?? '', 'text/plain');
  return parseScrape(text);
};
