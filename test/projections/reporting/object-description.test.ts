/**
 * An `at` answer describes the objects its rows name (title, parent, behaviour, labels) from their
 * fold documents' JSON text without parsing their attributes, which are most of that text: the
 * description must be the one the whole document gives, whatever the strings hold, and a document
 * laid out otherwise is read whole.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { describeObject, type ObjectInfo } from '../../../src/projections/reporting/object-info.ts';
import { LazyDocMap } from '../../../src/projections/reporting/lazy-docs.ts';
import { seededRandom } from '../../../bench/support.ts';
import { countingParses } from '../../support/count-parses.ts';

const test = suite('object descriptions from fold documents');

const info = (over: Partial<ObjectInfo> = {}): ObjectInfo => ({
  id: 'o1',
  objectType: 'phd:type:project',
  title: 'A project',
  parent: null,
  behaviour: null,
  deleted: false,
  labels: ['svc:label:common'],
  attributes: { 'phd:attribute:researcher': [{ type: 'link', ref: 'p1' }], 'dc:attribute:title': [{ type: 'text', value: 'x' }] },
  ...over,
});

const whole = (json: string) => {
  const { title, parent, behaviour, labels } = JSON.parse(json) as ObjectInfo;
  return { title, parent, behaviour, labels };
};

/** JSON.parse calls on text holding `mark` while `body` runs. */
const parsesOf = (mark: string, body: () => void): Promise<number> =>
  countingParses(mark, (count) => {
    body();
    return count();
  });

test('the description is the whole document’s, without parsing the attributes', async () => {
  const doc = info({ parent: 'o0', behaviour: 'std:behaviour', attributes: { a: [{ type: 'text', value: 'ATTRIBUTES-MARK' }] } });
  const json = JSON.stringify(doc);
  let got: unknown;
  assert.is(await parsesOf('ATTRIBUTES-MARK', () => (got = describeObject(json))), 0, 'no parse of the attributes');
  assert.equal(got, whole(json));
});

test('strings that look like the attributes key, quotes, backslashes and other scripts', () => {
  const random = seededRandom(41);
  const pieces = [',"attributes":', '\\', '"', '\\",', '}', '{', ',', ':', 'é', '日本', '\u0000', '\n', 'attributes', '\\\\"attributes\\":'];
  const text = () => Array.from({ length: 1 + Math.floor(random() * 6) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
  for (let i = 0; i < 500; i++) {
    const doc = info({
      title: text(),
      parent: random() < 0.5 ? null : text(),
      behaviour: random() < 0.5 ? null : text(),
      labels: Array.from({ length: Math.floor(random() * 3) }, text),
      attributes: { [text()]: [{ type: 'text', value: text() }] },
    });
    const json = JSON.stringify(doc);
    assert.equal(describeObject(json), whole(json), json);
  }
});

test('documents laid out otherwise are read whole', () => {
  const { attributes, ...rest } = info({ title: 'First' });
  // Attributes first (a store that reorders keys), a nested "attributes" key before the real one, none at all.
  for (const doc of [{ attributes, ...rest }, { extra: { attributes: 1 }, ...info({ title: 'Nested' }) }, rest]) {
    const json = JSON.stringify(doc);
    assert.equal(describeObject(json), whole(json), json);
  }
  // The description's fields missing from the text before the attributes: still the whole document's.
  const late = JSON.stringify({ id: 'o1', attributes, title: 'Late', parent: 'p', behaviour: null, labels: [] });
  assert.equal(describeObject(late), whole(late));
});

test('LazyDocMap.part reads a description without parsing the document, and keeps it', async () => {
  const map = new LazyDocMap();
  const doc = info({ attributes: { a: [{ type: 'text', value: 'ATTRIBUTES-MARK' }] } });
  map.setRaw('o1', JSON.stringify(doc));
  const describe = (ref: string) => map.part(ref, describeObject, (d) => d as ObjectInfo);
  let first: unknown;
  assert.is(await parsesOf('ATTRIBUTES-MARK', () => (first = describe('o1'))), 0);
  assert.equal(first, whole(JSON.stringify(doc)));
  assert.is(map.unparsed, 1, 'the document is left unparsed');
  assert.is(describe('o1'), first, 'kept for the next answer');
  assert.is((await map.copy()).part('o1', describeObject, (d) => d as ObjectInfo), first, 'and for copies of the state');
  assert.is(describe('missing'), undefined);
  // Once the document is parsed (a replay read it), the description is the document's own.
  const parsed = map.get('o1')!;
  assert.equal(parsed, doc);
  assert.is(describe('o1'), parsed);
});

test.run();
