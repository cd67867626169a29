import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { compileFormat, parseWithFormat } from '../../../src/commands/push-data/date-format.ts';

/** [format, input, expected ISO instant or undefined, hasTime] */
type Case = readonly [string, string, string | undefined, boolean?];

const CASES: readonly Case[] = [
  // dates
  ['yyyy-MM-dd', '2018-02-10', '2018-02-10T00:00:00.000Z', false],
  ['dd/MM/yyyy', '10/02/2018', '2018-02-10T00:00:00.000Z', false],
  ['d/M/yyyy', '1/2/2018', '2018-02-01T00:00:00.000Z', false],
  ['d/M/yyyy', '01/02/2018', '2018-02-01T00:00:00.000Z', false],
  ['d/M/yyyy', '31/12/2018', '2018-12-31T00:00:00.000Z', false],
  ['dd/MM/yyyy', '1/2/2018', undefined],
  ['yyyyMMdd', '20180210', '2018-02-10T00:00:00.000Z', false],
  ['yyyyMd', '20180210', '2018-02-10T00:00:00.000Z', false], // abutting fields take fixed widths
  ['dd MMM yyyy', '10 Feb 2018', '2018-02-10T00:00:00.000Z', false],
  ['dd MMM yyyy', '10 FEB 2018', '2018-02-10T00:00:00.000Z', false],
  ['dd MMM yyyy', '10 feb 2018', '2018-02-10T00:00:00.000Z', false],
  ['dd MMM yyyy', '10 February 2018', '2018-02-10T00:00:00.000Z', false], // Java accepts both forms
  ['d MMMM yyyy', '3 september 2018', '2018-09-03T00:00:00.000Z', false],
  ['d MMMM yyyy', '3 May 2018', '2018-05-03T00:00:00.000Z', false],
  ['d MMMM yyyy', '3 Sept 2018', undefined],
  ['MMM yyyy', 'Dec 2018', '2018-12-01T00:00:00.000Z', false],
  ['yyyy', '2018', '2018-01-01T00:00:00.000Z', false],
  ['EEE, d MMM yyyy', 'Sat, 10 Feb 2018', '2018-02-10T00:00:00.000Z', false],
  ['EEEE d MMMM yyyy', 'monday 10 February 2018', '2018-02-10T00:00:00.000Z', false], // day names are not checked
  ['EEE d MMM yyyy', 'Xyz 10 Feb 2018', undefined],
  ['dd.MM.yy', '10.02.18', '2018-02-10T00:00:00.000Z', false],
  ['dd.MM.yy', '10.02.99', '1999-02-10T00:00:00.000Z', false],
  ['dd.MM.yy', '10.02.2018', '2018-02-10T00:00:00.000Z', false], // 4 digits are taken literally (as Java)
  ['yyyy-MM-dd', '0099-01-01', '0099-01-01T00:00:00.000Z', false],
  // validation
  ['yyyy-MM-dd', '2018-02-29', undefined],
  ['yyyy-MM-dd', '2016-02-29', '2016-02-29T00:00:00.000Z', false],
  ['yyyy-MM-dd', '2000-02-29', '2000-02-29T00:00:00.000Z', false],
  ['yyyy-MM-dd', '1900-02-29', undefined],
  ['yyyy-MM-dd', '2018-04-31', undefined],
  ['yyyy-MM-dd', '2018-13-01', undefined],
  ['yyyy-MM-dd', '2018-00-01', undefined],
  ['yyyy-MM-dd', '2018-01-00', undefined],
  ['yyyy-MM-dd', '18-01-01', undefined],
  ['yyyy-MM-dd', '2018-1-01', undefined],
  ['yyyy-MM-dd', '2018-01-01 ', undefined],
  ['yyyy-MM-dd', ' 2018-01-01', undefined],
  ['yyyy-MM-dd', '2018-01-01T10:00', undefined],
  ['yyyy-MM-dd', '2018/01/01', undefined],
  ['yyyy-MM-dd', '', undefined],
  ['yyyy.MM.dd', '2018x01x01', undefined], // "." is a literal, not a regex wildcard
  // times (UTC unless a zone is given)
  ["yyyy-MM-dd'T'HH:mm:ss", '2018-02-10T14:05:09', '2018-02-10T14:05:09.000Z', true],
  ["yyyy-MM-dd'T'HH:mm:ss.SSS", '2018-02-10T14:05:09.123', '2018-02-10T14:05:09.123Z', true],
  ["yyyy-MM-dd'T'HH:mm:ss.SSS", '2018-02-10T14:05:09.12', undefined],
  ['yyyy-MM-dd HH:mm', '2018-02-10 23:59', '2018-02-10T23:59:00.000Z', true],
  ['yyyy-MM-dd HH:mm', '2018-02-10 24:00', undefined],
  ['yyyy-MM-dd HH:mm', '2018-02-10 12:60', undefined],
  ['yyyy-MM-dd HH:mm:ss', '2018-02-10 12:00:60', undefined],
  ['yyyy-MM-dd H:mm', '2018-02-10 9:30', '2018-02-10T09:30:00.000Z', true],
  ['yyyy-MM-dd HH', '2018-02-10 09', '2018-02-10T09:00:00.000Z', true],
  ['dd/MM/yyyy hh:mm a', '10/02/2018 02:30 PM', '2018-02-10T14:30:00.000Z', true],
  ['dd/MM/yyyy hh:mm a', '10/02/2018 12:30 am', '2018-02-10T00:30:00.000Z', true],
  ['dd/MM/yyyy hh:mm a', '10/02/2018 12:30 pm', '2018-02-10T12:30:00.000Z', true],
  ['dd/MM/yyyy h:mma', '10/02/2018 9:05AM', '2018-02-10T09:05:00.000Z', true],
  ['dd/MM/yyyy hh:mm a', '10/02/2018 13:30 PM', undefined],
  ['dd/MM/yyyy hh:mm a', '10/02/2018 00:30 AM', undefined],
  ['dd/MM/yyyy hh:mm', '10/02/2018 12:30', '2018-02-10T00:30:00.000Z', true], // no a: AM
  ['HHmm dd/MM/yyyy', '0930 10/02/2018', '2018-02-10T09:30:00.000Z', true],
  // zones
  ["yyyy-MM-dd'T'HH:mm:ssXXX", '2018-07-10T14:05:09+01:00', '2018-07-10T13:05:09.000Z', true],
  ["yyyy-MM-dd'T'HH:mm:ssXXX", '2018-07-10T14:05:09-05:30', '2018-07-10T19:35:09.000Z', true],
  ["yyyy-MM-dd'T'HH:mm:ssXXX", '2018-07-10T14:05:09Z', '2018-07-10T14:05:09.000Z', true],
  ["yyyy-MM-dd'T'HH:mm:ssXXX", '2018-07-10T14:05:09+0100', undefined],
  ["yyyy-MM-dd'T'HH:mm:ssXX", '2018-07-10T14:05:09+0100', '2018-07-10T13:05:09.000Z', true],
  ["yyyy-MM-dd'T'HH:mm:ssX", '2018-07-10T14:05:09+01', '2018-07-10T13:05:09.000Z', true],
  ["yyyy-MM-dd'T'HH:mm:ssXXX", '2018-07-10T14:05:09+25:00', undefined],
  ['yyyy-MM-dd HH:mm Z', '2018-07-10 14:05 -0800', '2018-07-10T22:05:00.000Z', true],
  ['yyyy-MM-dd HH:mm Z', '2018-07-10 14:05 +01:00', '2018-07-10T13:05:00.000Z', true],
  ['yyyy-MM-dd HH:mm Z', '2018-07-10 14:05 Z', undefined],
  ['yyyy-MM-dd HH:mmXXX', '2018-07-10 00:30+01:00', '2018-07-09T23:30:00.000Z', true], // the previous UTC day
  ['yyyy-MM-ddXXX', '2018-07-10+05:00', '2018-07-10T00:00:00.000Z', false], // a date names the day, whatever the zone
  // quoted literals
  ["dd 'de' MMMM 'de' yyyy", '10 de February de 2018', '2018-02-10T00:00:00.000Z', false],
  ["yyyy''MM", "2018'02", '2018-02-01T00:00:00.000Z', false],
  ["'Date: 'yyyy'-'MM'-'dd", 'Date: 2018-02-10', '2018-02-10T00:00:00.000Z', false],
  ["'It''s' yyyy", "It's 2018", '2018-01-01T00:00:00.000Z', false],
  ["'yyyy' yyyy", 'yyyy 2018', '2018-01-01T00:00:00.000Z', false],
  ['(yyyy) [MM] {dd} *+?^$|\\', '(2018) [02] {10} *+?^$|\\', '2018-02-10T00:00:00.000Z', false],
];

const parsing = suite('date format: parsing');
for (const [format, input, expected, hasTime] of CASES) {
  parsing(`${format} <- ${JSON.stringify(input)}`, () => {
    const parsed = parseWithFormat(input, format);
    if (expected === undefined) {
      assert.is(parsed, undefined);
      return;
    }
    assert.ok(parsed, 'expected a date');
    assert.is(parsed!.date.toISOString(), expected);
    assert.is(parsed!.hasTime, hasTime);
  });
}
parsing('two-digit years are placed within 80 years before and 20 years after now', () => {
  const now = new Date().getUTCFullYear();
  const inRange = (yy: number) => {
    const year = parseWithFormat(String(yy).padStart(2, '0'), 'yy')!.date.getUTCFullYear();
    assert.ok(year >= now - 80 && year < now + 20, `${yy} -> ${year}`);
    assert.is(year % 100, yy);
  };
  for (let yy = 0; yy < 100; yy++) inRange(yy);
});
parsing.run();

const compiling = suite('date format: compiling');

compiling('hasTime', () => {
  const c = (f: string) => {
    const r = compileFormat(f);
    if ('error' in r) throw new Error(r.error);
    return r.hasTime;
  };
  assert.is(c('yyyy-MM-dd'), false);
  assert.is(c('EEE dd MMM yyyy XXX'), false);
  assert.is(c('yyyy-MM-dd HH:mm'), true);
  assert.is(c("HH'h'"), true);
  assert.is(c('mm:ss'), true);
});

compiling('unsupported patterns give a reason', () => {
  const errors: [string, string][] = [
    ['yyyy-ww', "pattern letter 'w' is not supported"],
    ['yyyy-MM-dd G', "pattern letter 'G' is not supported"],
    ['yyyy-MM-dd z', "pattern letter 'z' is not supported"],
    ['yyyy-MM-dd kk:mm', "pattern letter 'k' is not supported"],
    ['yyyy-DDD', "pattern letter 'D' is not supported"],
    ['yyyyy', 'pattern "yyyyy" is not supported'],
    ['ddd/MM', 'pattern "ddd" is not supported'],
    ['SSSS', 'pattern "SSSS" is not supported'],
    ['HH:mm XXXX', 'pattern "XXXX" is not supported'],
    ['hh:mm aa', 'pattern "aa" is not supported'],
    ["yyyy 'at", 'unterminated quote'],
    ['yyyy-MM-dd yyyy', 'field "yyyy" appears more than once (also "yyyy")'],
    ['dd MMM MM', 'field "MM" appears more than once (also "MMM")'],
    ['HH hh a', 'field "hh" appears more than once (also "HH")'],
    ['', 'the format is empty'],
  ];
  for (const [format, error] of errors) assert.equal(compileFormat(format), { error }, format);
  assert.is(parseWithFormat('2018-01', 'yyyy-ww'), undefined);
});

compiling('a compiled format parses many values', () => {
  const c = compileFormat('dd/MM/yyyy');
  if ('error' in c) throw new Error(c.error);
  assert.is(c.format, 'dd/MM/yyyy');
  assert.is(c.parse('01/01/2020')!.date.toISOString(), '2020-01-01T00:00:00.000Z');
  assert.is(c.parse('31/01/2020')!.date.toISOString(), '2020-01-31T00:00:00.000Z');
  assert.is(c.parse('32/01/2020'), undefined);
});

compiling.run();
