import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toCsv } from '../../src/cli/csv.ts';

const test = suite('CSV');

test('fields with commas, quotes and line breaks are quoted (RFC 4180)', () => {
  assert.is(toCsv(['a', 'b'], [['x,y', 'say "hi"\nbye']]), 'a,b\r\n"x,y","say ""hi""\nbye"\r\n');
});

// A spreadsheet runs a cell that starts with = + - @ (or a tab or CR before one) as a formula.
test('text that a spreadsheet would read as a formula is escaped with a leading quote', () => {
  const out = toCsv(['t'], [['=HYPERLINK("http://x")'], ['+1'], ['-2+3'], ['@SUM(A1)'], ['\t=1'], ['\r=1'], ['plain']]);
  assert.equal(out.split('\r\n').slice(1, -1), [`"'=HYPERLINK(""http://x"")"`, `'+1`, `'-2+3`, `'@SUM(A1)`, `'\t=1`, `"'\r=1"`, 'plain']);
});

test('numbers stay numbers (a negative number is not escaped)', () => {
  assert.is(toCsv(['n'], [[-5], [1.5]]), 'n\r\n-5\r\n1.5\r\n');
});

test('list values joined with ";" are escaped as a whole', () => {
  assert.is(toCsv(['l'], [[['=a', 'b']]]), "l\r\n'=a;b\r\n");
});

test.run();
