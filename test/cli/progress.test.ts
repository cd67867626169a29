import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { progressReporter } from '../../src/cli/progress.ts';
import type { RebuildProgress } from '../../src/projections/rebuild.ts';

/** A stand-in for process.stderr that records every write. */
const fakeStream = (isTTY: boolean, columns?: number) => {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns, write: (chunk: string) => (writes.push(chunk), true) } };
};

// Escape sequences take no columns on screen.
const visible = (text: string) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');

const ALL = 'objects, users, work_units, rest_apis, files, collection:phd_projects, collection:people';

const run = (report: (p: RebuildProgress) => void, projection = ALL, head = 50_000) => {
  const steps = 14;
  for (let i = 1; i <= steps; i++) {
    const position = Math.round((head * i) / steps);
    report({ projection, processed: position, position, head, eventsPerSecond: 123_456, etaSeconds: steps - i, phase: 'building' });
  }
  report({ projection, processed: head, position: head, head, eventsPerSecond: 123_456, etaSeconds: 0, phase: 'switching' });
  report({ projection, processed: head, position: head, head, eventsPerSecond: 123_456, etaSeconds: 0, phase: 'done' });
};

const test = suite('rebuild progress');

test('on a terminal one line is redrawn: every write after the first returns to the line start, none is wider than the terminal', () => {
  for (const columns of [80, 40]) {
    const { writes, stream } = fakeStream(true, columns);
    let now = 0;
    run(progressReporter(stream, () => (now += 250)));
    assert.ok(writes.length > 1);
    writes.forEach((w, i) => {
      if (i > 0) assert.ok(w.startsWith('\r') || w.startsWith('\x1b['), `write ${i} ${JSON.stringify(w)} does not return to the line start`);
      for (const line of visible(w).split(/[\r\n]/)) assert.ok(line.length <= columns, `${line.length} columns > ${columns}: ${JSON.stringify(line)}`);
    });
    const output = writes.join('');
    // The bar ends on a line of its own once the rebuild is done: exactly one newline, at the very end.
    assert.is(output.split('\n').length - 1, 1);
    assert.ok(output.endsWith('\n'));
    assert.match(visible(writes[writes.length - 1]!), 'done');
    assert.match(visible(writes[writes.length - 1]!), '100.0%');
  }
});

test('a terminal without a known width is taken as 80 columns', () => {
  const { writes, stream } = fakeStream(true);
  let now = 0;
  run(progressReporter(stream, () => (now += 250)));
  for (const w of writes) for (const line of visible(w).split(/[\r\n]/)) assert.ok(line.length <= 80);
});

test('anywhere else plain lines, each ending in a newline, at most one a second while building, and the last phases always', () => {
  const { writes, stream } = fakeStream(false);
  let now = 0;
  run(progressReporter(stream, () => (now += 250)), 'objects');
  assert.ok(writes.length >= 4 && writes.length <= 8, `${writes.length} lines`);
  for (const w of writes) {
    assert.ok(w.endsWith('\n'));
    assert.is(w.indexOf('\n'), w.length - 1);
    assert.not.match(w, /[\r\x1b]/);
  }
  assert.match(writes[writes.length - 2]!, 'switching');
  assert.match(writes[writes.length - 1]!, /^objects 100\.0% 50,000 events .* done\n$/);
});

test.run();
