/**
 * Push-data input readers (haplo-behaviour.md §3.3), response formats and the endpoint's
 * statuses (§2.2): multi-record JSON with partial success, XML and TSV bodies, XML responses,
 * the body size limit, not authorised and unknown APIs.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { basic, call, createUser, issueKey } from '../../support/fixtures.ts';
import { EXAMPLE_CONTROL, adminObject, control, defineApi, expectFailure, expectSuccess, head, plain, push, PUSH_DATA_GROUP, PUSH_DATA_USER, type Api } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const LIMIT = 64 * 1024;
const TITLE = 'dc:attribute:title';

/** The contract example's instructions: the project title of the user named in the record. */
const EXAMPLE = EXAMPLE_CONTROL.instructions;
const example = (read: Record<string, unknown>) => control('svc:person', EXAMPLE, {}, read);

interface Ctx {
  svc: TestService;
  single: Api;
}
const test = suite<Ctx>('Push data: readers, response formats, statuses', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BODY_LIMIT: String(LIMIT) });
  for (const username of ['rita', 'sam', 'tess', 'ulla', 'vic', 'wim']) await createUser(ctx.svc, { username, first: username, last: 'Reader' });
  ctx.single = await defineApi(ctx.svc, example({ read: 'json', singleRecord: true }));
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

/** The title of the user's PhD project (through a push that changes nothing, then the admin API). */
const projectTitle = async (ctx: Ctx, ref: string | undefined) => (ref ? plain(await adminObject(ctx.svc, ref), TITLE)[0] : undefined);

// --------------------------------------------------------------------------------------------
// json

test('json without singleRecord: an array of records, each committed on its own (partial success)', async (ctx) => {
  const api = await defineApi(ctx.svc, example({ read: 'json' }));
  const reply = await api.push([{ username: 'rita', title: 'Rita title' }, { username: 'nobody', title: 'Lost' }]);
  const body = expectFailure(reply);
  assert.is(body.applied, 1);
  assert.is(body.failures, 1);
  assert.is(body.errorCount, 2);
  assert.equal(body.errors, ["Couldn't load destination: profile (record 1)", 'Destination "profile" needs be made ready with a "new" or "load" instruction, required by use of phd:project (record 1)']);
  assert.equal(body.actions.map((a) => a.record), ['record 0', 'record 1']);
  assert.equal(body.actions[1]!.changed, []);
  const [project] = body.actions[0]!.changed;
  assert.is(project!.destination, 'phd:project');
  assert.is(project!.new, true);
  assert.is(await projectTitle(ctx, project!.ref), 'Rita title', 'record 0 stays committed');

  const empty = expectSuccess(await api.push([]));
  assert.equal(empty, { result: 'success', applied: 0, failures: 0, errorCount: 0, errors: [], actions: [] });
});

test('json body shapes: singleRecord needs one object, otherwise an array of objects; a byte order mark is fine', async (ctx) => {
  const many = await defineApi(ctx.svc, example({ read: 'json' }));
  const cases: [Api, string, RegExp][] = [
    [ctx.single, '[{"username":"rita"}]', /singleRecord is set/],
    [ctx.single, '"text"', /singleRecord is set/],
    [many, '{"username":"rita"}', /expected an array of records/],
    [many, '[{"username":"rita"}, 3]', /record 1 is not an object/],
    [many, '', /Invalid JSON/],
    [many, '[{"username":"rita"},]', /Invalid JSON/],
  ];
  const before = await head(ctx.svc);
  for (const [api, body, message] of cases) {
    const reply = await api.push(body);
    assert.is(reply.status, 400, body);
    assert.is(reply.body.result, 'error');
    assert.is(reply.body.errors.length, 1);
    assert.match(reply.body.errors[0]!, /^Exception when processing: /);
    assert.match(reply.body.errors[0]!, message);
    assert.equal(reply.body.actions, []);
  }
  assert.is(await head(ctx.svc), before);
  const bom = await ctx.single.push(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"username":"sam","title":"After a BOM"}')]));
  expectSuccess(bom);
});

// --------------------------------------------------------------------------------------------
// XML readers

test('xml-text-of-children: child elements are records, their children fields (local names, entities, CDATA)', async (ctx) => {
  const api = await defineApi(ctx.svc, example({ read: 'xml-text-of-children' }));
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<people xmlns:p="urn:example">
  <person><username>sam</username><p:title>Sam &amp; the XML</p:title></person>
  <person><username>tess</username><title><![CDATA[Tess <raw>]]></title></person>
</people>`;
  const body = expectSuccess(await api.push(xml, { 'Content-Type': 'application/xml' }));
  assert.is(body.applied, 2);
  assert.is(await projectTitle(ctx, body.actions[0]!.changed[0]!.ref), 'Sam & the XML');
  assert.is(await projectTitle(ctx, body.actions[1]!.changed[0]!.ref), 'Tess <raw>');

  const single = await defineApi(ctx.svc, example({ read: 'xml-text-of-children', singleRecord: true }));
  const one = expectSuccess(await single.push('<person><username>sam</username><title>Sam single</title></person>'));
  assert.is(await projectTitle(ctx, one.actions[0]!.changed[0]!.ref), 'Sam single');

  // The charset comes from the declaration.
  const latin1 = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><person><username>sam</username><title>Caf\u00e9 Sam</title></person>', 'latin1');
  const decoded = expectSuccess(await single.push(latin1));
  assert.is(await projectTitle(ctx, decoded.actions[0]!.changed[0]!.ref), 'Caf\u00e9 Sam');
});

test('xml readers refuse malformed XML and entity declarations as an error result, changing nothing', async (ctx) => {
  const api = await defineApi(ctx.svc, example({ read: 'xml-text-of-children' }));
  const before = await head(ctx.svc);
  const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><people><person><username>sam</username><title>&lol2;</title></person></people>`;
  for (const body of ['<people><person>', 'not xml at all', '', '<a></a><b></b>', bomb, '<people><person><title>&undefined;</title></person></people>']) {
    const reply = await api.push(body);
    assert.is(reply.status, 400, body);
    assert.is(reply.body.result, 'error', reply.text);
    assert.match(reply.body.errors[0]!, /^Exception when processing: Invalid XML/);
  }
  assert.is(await head(ctx.svc), before);
});

test('xml-attributes: the attributes of each child element form a record', async (ctx) => {
  const api = await defineApi(ctx.svc, example({ read: 'xml-attributes' }));
  const body = expectSuccess(await api.push('<records xmlns="urn:x"><record username="tess" title="Tess &quot;attributes&quot;"/><record username="ulla" title="Ulla attributes"></record></records>'));
  assert.is(body.applied, 2);
  assert.is(await projectTitle(ctx, body.actions[0]!.changed[0]!.ref), 'Tess "attributes"');
  assert.is(await projectTitle(ctx, body.actions[1]!.changed[0]!.ref), 'Ulla attributes');

  const single = await defineApi(ctx.svc, example({ read: 'xml-attributes', singleRecord: true }));
  const one = expectSuccess(await single.push('<record username="ulla" title="Ulla single"/>'));
  assert.is(await projectTitle(ctx, one.actions[0]!.changed[0]!.ref), 'Ulla single');
});

// --------------------------------------------------------------------------------------------
// tsv-with-name-row

test('tsv-with-name-row: a header row names the columns; empty lines disappear; empty cells are omitted', async (ctx) => {
  const api = await defineApi(ctx.svc, example({ read: 'tsv-with-name-row' }));
  const body = expectSuccess(await api.push('username\ttitle\r\nvic\tVic from TSV\r\n\r\nwim\t\n'));
  assert.is(body.applied, 2);
  assert.is(body.actions.length, 2, 'the empty line is not a record');
  assert.is(await projectTitle(ctx, body.actions[0]!.changed[0]!.ref), 'Vic from TSV');
  assert.equal(body.actions[1]!.changed, [], 'no title: wim has nothing to change');

  const csv = await defineApi(ctx.svc, example({ read: 'tsv-with-name-row', separator: ',', charset: 'iso-8859-1' }));
  const latin1 = expectSuccess(await csv.push(Buffer.from('title,username\nWim na\u00efve,wim\n', 'latin1')));
  assert.is(await projectTitle(ctx, latin1.actions[0]!.changed[0]!.ref), 'Wim na\u00efve');

  assert.equal(expectSuccess(await api.push('')).actions, [], 'no header row, no records');
  assert.equal(expectSuccess(await api.push('username\ttitle\n')).actions, []);
});

// --------------------------------------------------------------------------------------------
// XML responses

const xmlReply = (reply: { status: number; contentType: string; text: string }) => {
  assert.match(reply.contentType, 'application/xml');
  assert.match(reply.text, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<response /);
  return reply.text;
};

test('response XML: success, failure (with escaping, control characters removed) and disabled API', async (ctx) => {
  const api = await defineApi(ctx.svc, control('svc:person', [...EXAMPLE, { action: 'if-exists', source: 'complain', then: [{ action: 'log-error', message: 'Odd <&> "input"\u0001' }] }]), { response: 'XML' });

  await createUser(ctx.svc, { username: 'xavier', first: 'Xavier', last: 'Reader' });
  const ok = await api.push({ username: 'xavier', title: 'Xavier in XML' });
  assert.is(ok.status, 200, ok.text);
  const text = xmlReply(ok);
  const ref = /<changed kind="object:save" destination="phd:project" ref="([0-9a-z]{12})" new="true"\/>/.exec(text)?.[1];
  assert.ok(ref, text);
  assert.is(text, `<?xml version="1.0" encoding="UTF-8"?>\n<response result="success" applied="1" failures="0" errorCount="0"><errors></errors><actions><record identifier="record 0"><changed kind="object:save" destination="phd:project" ref="${ref}" new="true"/></record></actions></response>\n`);

  const logged = await api.push({ username: 'xavier', title: 'Xavier in XML', complain: true });
  assert.is(logged.status, 200);
  assert.match(xmlReply(logged), '<errors><error>Odd &lt;&amp;&gt; &quot;input&quot; (record 0)</error></errors><actions><record identifier="record 0"></record></actions>');

  const failed = await api.push({ username: 'nobody', title: 'x' });
  assert.is(failed.status, 400);
  assert.is(
    xmlReply(failed),
    `<?xml version="1.0" encoding="UTF-8"?>\n<response result="failure" applied="0" failures="1" errorCount="2"><errors><error>Couldn't load destination: profile (record 0)</error><error>Destination &quot;profile&quot; needs be made ready with a &quot;new&quot; or &quot;load&quot; instruction, required by use of phd:project (record 0)</error></errors><actions><record identifier="record 0"></record></actions></response>\n`,
  );

  const broken = await api.push('{');
  assert.is(broken.status, 400);
  assert.match(xmlReply(broken), /<response result="error" applied="0" failures="0" errorCount="0"><errors><error>Exception when processing: Invalid JSON/);

  assert.is((await call(ctx.svc, `/api/admin/rest-apis/${api.url}`, { method: 'PUT', body: { enabled: false } })).status, 200);
  const disabled = await api.push({ username: 'xavier', title: 'x' });
  assert.is(disabled.status, 400);
  assert.is(
    xmlReply(disabled),
    `<?xml version="1.0" encoding="UTF-8"?>\n<response result="error" applied="0" failures="0" errorCount="1"><errors><error>API is disabled: ${api.url}</error></errors><actions></actions></response>\n`,
  );

  // GET is always answered in JSON.
  const get = await ctx.svc.request(`/api/push-data/${api.url}`, { admin: false, headers: { Authorization: basic(api.key) } });
  assert.is(get.status, 400);
  assert.equal(await get.json(), { result: 'error', applied: 0, failures: 0, errorCount: 1, errors: ['Only POST requests supported for push data REST APIs.'] });
});

// --------------------------------------------------------------------------------------------
// Size limit

test('a body over SVC_BODY_LIMIT is refused with 413 (declared or streamed); a body at the limit is accepted', async (ctx) => {
  const before = await head(ctx.svc);
  const over = await ctx.single.push(JSON.stringify({ username: 'rita', title: 'Too big', pad: 'x'.repeat(LIMIT) }));
  assert.is(over.status, 413);
  assert.equal(over.body, { result: 'error', applied: 0, failures: 0, errorCount: 1, errors: [`Request body is larger than the limit of ${LIMIT} bytes`], actions: [] });

  const chunks = [Buffer.from('{"username":"rita","pad":"'), Buffer.alloc(LIMIT, 'y'), Buffer.from('"}')];
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
  const streamed = await fetch(`${ctx.svc.url}/api/push-data/${ctx.single.url}`, {
    method: 'POST',
    body: stream,
    headers: { Authorization: basic(ctx.single.key) },
    duplex: 'half',
  } as RequestInit);
  assert.is(streamed.status, 413);
  assert.equal(((await streamed.json()) as { result: string; errors: string[] }).errors, [`Request body is larger than the limit of ${LIMIT} bytes`]);
  assert.is(await head(ctx.svc), before, 'nothing written');

  const prefix = '{"username":"rita","title":"Exactly at the limit","pad":"';
  const exact = `${prefix}${'z'.repeat(LIMIT - prefix.length - 2)}"}`;
  assert.is(Buffer.byteLength(exact), LIMIT);
  expectSuccess(await ctx.single.push(exact));
});

// --------------------------------------------------------------------------------------------
// Authorisation and unknown APIs

test('not authorised: a key covering /api/push-data/ whose user is not in the push-data group gets 403', async (ctx) => {
  const outsider = await createUser(ctx.svc, { username: 'outsider', first: 'Out', last: 'Sider' });
  const key = await issueKey(ctx.svc, outsider.username, { path: '/api/push-data/' });
  const xmlApi = await defineApi(ctx.svc, example({ read: 'json', singleRecord: true }), { response: 'XML' });
  const afterDefine = await head(ctx.svc);
  for (const url of [ctx.single.url, xmlApi.url]) {
    const reply = await push(ctx.svc, url, key.key, { username: 'outsider', title: 'Not allowed' });
    assert.is(reply.status, 403, reply.text);
    assert.match(reply.contentType, 'application/json', 'not authorised is answered in JSON, whatever the API format');
    const { actions, ...rest } = reply.body;
    assert.equal(rest, { result: 'not authorised', applied: 0, failures: 0, errorCount: 1, errors: [] });
    assert.equal(actions ?? [], []);
  }
  assert.is(await head(ctx.svc), afterDefine, 'nothing written');
});

test('an unknown API with a valid key is "API not defined: <url>" (400), checked before authorisation', async (ctx) => {
  const member = await createUser(ctx.svc, { username: 'member', first: 'Mem', last: 'Ber', groups: [PUSH_DATA_GROUP] });
  const memberKey = await issueKey(ctx.svc, member.username, { path: '/api/push-data/' });
  const serviceKey = await issueKey(ctx.svc, PUSH_DATA_USER, { path: '/api/push-data/' });
  const outsiderKey = await issueKey(ctx.svc, 'outsider', { path: '/api/push-data/' });
  for (const key of [memberKey.key, serviceKey.key, outsiderKey.key]) {
    const reply = await push(ctx.svc, 'never-defined', key, { username: 'member' });
    assert.is(reply.status, 400, reply.text);
    const { actions, ...rest } = reply.body;
    assert.equal(rest, { result: 'error', applied: 0, failures: 0, errorCount: 1, errors: ['API not defined: never-defined'] });
    assert.equal(actions ?? [], []);
  }
  // A member of the group with a prefix key may push to any API.
  expectSuccess(await push(ctx.svc, ctx.single.url, memberKey.key, { username: 'member', title: 'Member title' }));
});

test('the exact-path key of one API does not reach an unknown API either', async (ctx) => {
  const reply = await push(ctx.svc, 'never-defined', ctx.single.key, {});
  assert.is(reply.status, 403);
  assert.is((reply.body as unknown as { kind: string }).kind, 'svc:auth:invalid-api-key');
});

test.run();
