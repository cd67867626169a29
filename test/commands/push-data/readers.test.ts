import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { FileSpec } from '../../../src/domain/control-file.ts';
import { READERS, ReaderError, readerNames } from '../../../src/commands/push-data/readers.ts';

const read = (reader: string, body: string | Buffer, spec: Partial<FileSpec> = {}) => {
  const fn = READERS[reader];
  if (!fn) throw new Error(`no reader ${reader}`);
  return fn(typeof body === 'string' ? Buffer.from(body, 'utf8') : body, { read: reader, ...spec });
};

/** The ReaderError that reading throws; fails when reading succeeds or throws something else. */
const readerError = (reader: string, body: string | Buffer, spec: Partial<FileSpec> = {}): ReaderError => {
  try {
    read(reader, body, spec);
  } catch (e) {
    assert.instance(e, ReaderError);
    return e as ReaderError;
  }
  assert.unreachable(`${reader} accepted ${String(body).slice(0, 40)}`);
  throw new Error('unreachable');
};

const names = suite('import readers: names');

names('the four Haplo readers exist, and nothing else resolves', () => {
  assert.equal([...readerNames].sort(), ['json', 'tsv-with-name-row', 'xml-attributes', 'xml-text-of-children']);
  assert.is(READERS['constructor'], undefined);
  assert.is(READERS['toString'], undefined);
});

names.run();

// --------------------------------------------------------------------------

const json = suite('import readers: json');

json('an array of records', () => {
  assert.equal(read('json', '[{"a":1},{"b":"x","c":[1,2]}]'), [{ a: 1 }, { b: 'x', c: [1, 2] }]);
  assert.equal(read('json', '[]'), []);
});

json('singleRecord: one object is one record', () => {
  assert.equal(read('json', '{"username":"jbloggs","title":"Updated title"}', { singleRecord: true }), [
    { username: 'jbloggs', title: 'Updated title' },
  ]);
});

json('UTF-8, with or without a byte order mark', () => {
  assert.equal(read('json', '[{"name":"Zoë Ω"}]'), [{ name: 'Zoë Ω' }]);
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"é"}')]);
  assert.equal(read('json', bom, { singleRecord: true }), [{ a: 'é' }]);
});

json('malformed JSON', () => {
  const e = readerError('json', '{"a": tru');
  assert.ok(e.message.startsWith('Invalid JSON in request body: '), e.message);
  assert.is(e.name, 'ReaderError');
});

json('an object without singleRecord is refused (Haplo would iterate its values)', () => {
  assert.match(readerError('json', '{"a":1}').message, /^Invalid JSON in request body: expected an array of records/);
  assert.match(readerError('json', '"text"').message, /^Invalid JSON in request body: expected an array/);
});

json('records must be objects', () => {
  for (const body of ['[1]', '[null]', '["x"]', '[[1]]', '[{"a":1}, 2]']) {
    assert.match(readerError('json', body).message, /^Invalid JSON in request body: record \d is not an object$/, body);
  }
  for (const body of ['[{"a":1}]', '1', 'null', '"x"']) {
    assert.match(readerError('json', body, { singleRecord: true }).message, /singleRecord is set/, body);
  }
});

json('__proto__ in the input stays plain data', () => {
  const [r] = read('json', '{"__proto__":{"polluted":1}}', { singleRecord: true });
  assert.is(Object.getPrototypeOf(r), Object.prototype);
  assert.equal(Object.keys(r!), ['__proto__']);
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

json('error messages never quote more than 100 characters of the input', () => {
  const secret = 'S'.repeat(500);
  for (const body of [`{"a": ${secret}`, `[${secret}]`, `{"${secret}": }`, secret]) {
    const e = readerError('json', body);
    assert.ok(!e.message.includes('S'.repeat(101)), e.message);
    assert.ok(e.message.length < 200, e.message);
  }
});

json.run();

// --------------------------------------------------------------------------

const xmlText = suite('import readers: xml-text-of-children');

xmlText('child elements are records; grandchildren, by local name, are fields', () => {
  const xml = `<?xml version="1.0"?>
<people xmlns:p="urn:p">
  <person><username>jbloggs</username><p:title>Dr &amp; Prof</p:title><empty/></person>
  <!-- a comment -->
  <person>
    <username>asmith</username>
    <note><![CDATA[<b>bold</b>]]> and <i>more</i></note>
  </person>
</people>`;
  assert.equal(read('xml-text-of-children', xml), [
    { username: 'jbloggs', title: 'Dr & Prof', empty: '' },
    { username: 'asmith', note: '<b>bold</b> and more' },
  ]);
});

xmlText('element order is kept; a repeated name keeps the last value', () => {
  const records = read('xml-text-of-children', '<r><x><b>1</b><a>2</a><c>3</c><a>4</a></x></r>');
  assert.equal(records, [{ b: '1', a: '4', c: '3' }]);
  assert.equal(Object.keys(records[0]!), ['b', 'a', 'c']);
});

xmlText('values stay text: no number parsing, no trimming', () => {
  assert.equal(read('xml-text-of-children', '<r><x><n>007</n><t> padded </t><b>true</b></x></r>'), [{ n: '007', t: ' padded ', b: 'true' }]);
});

xmlText('singleRecord: the root children are the fields of one record', () => {
  assert.equal(read('xml-text-of-children', '<person><username>jbloggs</username><title>T</title></person>', { singleRecord: true }), [
    { username: 'jbloggs', title: 'T' },
  ]);
});

xmlText('a root without children gives no records', () => {
  assert.equal(read('xml-text-of-children', '<people/>'), []);
  assert.equal(read('xml-text-of-children', '<people>  </people>'), []);
});

xmlText('character references are decoded', () => {
  assert.equal(read('xml-text-of-children', '<r><x><a>&#233;&#x41;&lt;&gt;&quot;&apos;</a></x></r>'), [{ a: 'éA<>"\'' }]);
});

xmlText('charset comes from the XML declaration, UTF-8 by default', () => {
  const latin1 = Buffer.concat([
    Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><r><x><n>', 'latin1'),
    Buffer.from([0x5a, 0x6f, 0xeb]), // "Zoë" in ISO-8859-1
    Buffer.from('</n></x></r>', 'latin1'),
  ]);
  assert.equal(read('xml-text-of-children', latin1), [{ n: 'Zoë' }]);
  assert.equal(read('xml-text-of-children', Buffer.from('<r><x><n>Zoë</n></x></r>', 'utf8')), [{ n: 'Zoë' }]);
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<r><x><n>Ω</n></x></r>', 'utf16le')]);
  assert.equal(read('xml-text-of-children', utf16), [{ n: 'Ω' }]);
});

xmlText('windows-1252: €, ƒ and curly quotes are those characters, not C1 controls', () => {
  const body = Buffer.concat([
    Buffer.from('<?xml version="1.0" encoding="windows-1252"?><r><x><n>', 'latin1'),
    Buffer.from([0x80, 0x20, 0x83, 0x20, 0x93, 0x71, 0x94, 0x20, 0x91, 0x73, 0x92, 0x20, 0xe9]),
    Buffer.from('</n></x></r>', 'latin1'),
  ]);
  assert.equal(read('xml-text-of-children', body), [{ n: '€ ƒ \u201cq\u201d \u2018s\u2019 é' }]);
});

xmlText('an unknown encoding is an error', () => {
  assert.is(readerError('xml-text-of-children', '<?xml version="1.0" encoding="x-nope"?><r/>').message, 'Invalid XML: unsupported encoding x-nope');
});

xmlText('malformed XML', () => {
  for (const body of ['<a><b></a>', '', 'hello', '<a x="1" x="2"/>', '<a>AT&T</a>']) {
    assert.match(readerError('xml-text-of-children', body).message, /^Invalid XML: /, body);
  }
  assert.is(readerError('xml-text-of-children', '<a/><b/>').message, 'Invalid XML: more than one root element');
  assert.match(readerError('xml-text-of-children', '<a>&nbsp;</a>').message, /^Invalid XML: undefined entity &nbsp;/);
});

xmlText('DOCTYPE entity declarations are refused, so nothing expands (billion laughs)', () => {
  const lol = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<lolz><x><a>&lol3;</a></x></lolz>`;
  assert.match(readerError('xml-text-of-children', lol).message, /^Invalid XML: .*not allowed/);
  assert.match(readerError('xml-text-of-children', '<!DOCTYPE r [<!ENTITY e "x">]><r><x><a>&e;</a></x></r>').message, /^Invalid XML: /);
  // A DOCTYPE without declarations is harmless (nothing is fetched).
  assert.equal(read('xml-text-of-children', '<!DOCTYPE r SYSTEM "r.dtd"><r><x><a>1</a></x></r>'), [{ a: '1' }]);
});

xmlText('error messages never quote more than 100 characters of the input', () => {
  const long = 'T'.repeat(400);
  for (const body of [`<${long}></x>`, `<a ${long}/>`, `<a>${long}</b>`, `<?xml version="1.0" encoding="${long}"?><a/>`]) {
    const e = readerError('xml-text-of-children', body);
    assert.ok(!e.message.includes('T'.repeat(101)), e.message);
  }
});

xmlText.run();

// --------------------------------------------------------------------------

const xmlAttrs = suite('import readers: xml-attributes');

xmlAttrs('the attributes of each child element form one record', () => {
  const xml = '<people xmlns="urn:x"><person username="jbloggs" title="Dr &amp; Prof"/><person username="asmith"><ignored a="1"/></person></people>';
  assert.equal(read('xml-attributes', xml), [{ username: 'jbloggs', title: 'Dr & Prof' }, { username: 'asmith' }]);
});

xmlAttrs('attribute values are not parsed or trimmed; namespace declarations are left out', () => {
  assert.equal(read('xml-attributes', '<r xmlns:p="urn:p"><x n="007" p:t=" a " xmlns:q="urn:q"/></r>'), [{ n: '007', 'p:t': ' a ' }]);
});

xmlAttrs('singleRecord: the root element\'s attributes are the record (as Haplo)', () => {
  assert.equal(read('xml-attributes', '<person username="jbloggs" title="T"><child a="1"/></person>', { singleRecord: true }), [
    { username: 'jbloggs', title: 'T' },
  ]);
});

xmlAttrs('an element without attributes is an empty record', () => {
  assert.equal(read('xml-attributes', '<r><x/><y a="1"/></r>'), [{}, { a: '1' }]);
});

xmlAttrs.run();

// --------------------------------------------------------------------------

const tsv = suite('import readers: tsv-with-name-row');

tsv('the first line names the columns; empty cells are omitted', () => {
  assert.equal(read('tsv-with-name-row', 'username\ttitle\temail\njbloggs\tDr\t\nasmith\t\tas@example.com\n'), [
    { username: 'jbloggs', title: 'Dr' },
    { username: 'asmith', email: 'as@example.com' },
  ]);
});

tsv('lines split on runs of CR/LF: empty lines vanish', () => {
  assert.equal(read('tsv-with-name-row', 'a\tb\r\n1\t2\r\n\r\n\n3\t4\r\n\r\n'), [
    { a: '1', b: '2' },
    { a: '3', b: '4' },
  ]);
});

tsv('cells beyond the named columns are ignored; short rows are fine', () => {
  assert.equal(read('tsv-with-name-row', 'a\tb\n1\t2\t3\n4'), [{ a: '1', b: '2' }, { a: '4' }]);
});

tsv('values are text, kept as they are', () => {
  assert.equal(read('tsv-with-name-row', 'n\tt\n007\t a \n'), [{ n: '007', t: ' a ' }]);
});

tsv('separator option', () => {
  assert.equal(read('tsv-with-name-row', 'a,b\n1,2\n', { separator: ',' }), [{ a: '1', b: '2' }]);
  assert.equal(read('tsv-with-name-row', 'a||b\n1||2\n', { separator: '||' }), [{ a: '1', b: '2' }]);
});

tsv('charset option, UTF-8 by default', () => {
  assert.equal(read('tsv-with-name-row', Buffer.from('name\nZoë\n', 'utf8')), [{ name: 'Zoë' }]);
  assert.equal(read('tsv-with-name-row', Buffer.from('name\nZoë\n', 'latin1'), { charset: 'ISO-8859-1' }), [{ name: 'Zoë' }]);
  assert.equal(read('tsv-with-name-row', Buffer.from('name\nZoë\n', 'latin1'), { charset: 'windows-1252' }), [{ name: 'Zoë' }]);
});

tsv('windows-1252: €, ƒ and curly quotes are those characters, not C1 controls', () => {
  const body = Buffer.concat([Buffer.from('price\tname\n', 'latin1'), Buffer.from([0x80, 0x35, 0x09, 0x93, 0x83, 0x94, 0x0a])]);
  for (const charset of ['windows-1252', 'cp1252']) assert.equal(read('tsv-with-name-row', body, { charset }), [{ price: '€5', name: '\u201cƒ\u201d' }], charset);
});

tsv('an unknown charset is an error', () => {
  assert.is(readerError('tsv-with-name-row', 'a\n1', { charset: 'x-nope' }).message, 'Unknown charset for tsv-with-name-row: x-nope');
});

tsv('an empty file, or a name row only, gives no records', () => {
  assert.equal(read('tsv-with-name-row', ''), []);
  assert.equal(read('tsv-with-name-row', 'a\tb\n'), []);
});

tsv('a __proto__ column stays plain data', () => {
  const [r] = read('tsv-with-name-row', '__proto__\tx\n1\t2\n');
  assert.is(Object.getPrototypeOf(r), Object.prototype);
  assert.equal(Object.keys(r!), ['__proto__', 'x']);
});

tsv.run();
