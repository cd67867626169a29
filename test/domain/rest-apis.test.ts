import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ControlFile } from '../../src/domain/control-file.ts';
import { restApiDecider, restApiStream, type RestApiCommand, type RestApiEvent } from '../../src/domain/rest-apis.ts';
import { deciderSpec, GIVEN_AT } from '../support/decider-spec.ts';

const spec = deciderSpec(restApiDecider);
const test = suite('REST APIs: decider');

const control: ControlFile = { dataImportControlFileVersion: 0, model: 'haplo:person', files: { DEFAULT: { read: 'json' } }, instructions: [] };
const definition = { url: 'people', description: 'People feed', enabled: true, response: 'JSON' as const, control };
const defined: RestApiEvent = { type: 'RestApiDefined', data: definition };
const change = (fields: Omit<RestApiCommand & { type: 'ChangeRestApi' }, 'type' | 'url'>): RestApiCommand => ({ type: 'ChangeRestApi', url: 'people', ...fields });

test('DefineRestApi: records the definition', () => {
  spec.given([]).when({ type: 'DefineRestApi', ...definition }).then([defined]);
  assert.is(restApiStream('people'), 'restapi-people');
});

test('DefineRestApi: refused when the URL is in use', () => {
  spec.given([defined]).when({ type: 'DefineRestApi', ...definition, description: 'Other' }).thenThrows('svc:rest-api:url-in-use', { reason: 'conflict', message: 'URL is already in use.' });
});

test('ChangeRestApi: records only the properties that differ (control files compared as JSON)', () => {
  spec
    .given([defined])
    .when(change({ description: 'People feed', enabled: false, response: 'XML', control: { ...control } }))
    .then([{ type: 'RestApiChanged', data: { url: 'people', enabled: false, response: 'XML' } }]);
  const other: ControlFile = { ...control, model: 'haplo:project' };
  spec.given([defined]).when(change({ control: other })).then([{ type: 'RestApiChanged', data: { url: 'people', control: other } }]);
});

test('ChangeRestApi: nothing when every property given is as defined', () => {
  spec.given([defined]).when(change({ description: 'People feed', enabled: true, response: 'JSON', control: JSON.parse(JSON.stringify(control)) })).thenNothing();
  spec.given([defined]).when(change({})).thenNothing();
  spec.given([defined, { type: 'RestApiChanged', data: { url: 'people', enabled: false } }]).when(change({ enabled: false })).thenNothing();
});

test('ChangeRestApi: refused for an API that is not defined', () => {
  spec.given([]).when(change({ enabled: false })).thenThrows('svc:rest-api:no-such-api', { reason: 'not-found', message: 'REST API people does not exist' });
});

test('evolve: created and updated at the recorded times; changes overwrite what they carry', () => {
  const later = new Date(GIVEN_AT.getTime() + 1000);
  const first = restApiDecider.evolve(restApiDecider.initialState, defined, GIVEN_AT);
  const state = restApiDecider.evolve(first, { type: 'RestApiChanged', data: { url: 'people', enabled: false } }, later);
  assert.equal(state, { ...definition, enabled: false, createdAt: GIVEN_AT.toISOString(), updatedAt: later.toISOString() });
  assert.throws(() => restApiDecider.evolve(null, { type: 'RestApiChanged', data: { url: 'people' } }, GIVEN_AT), /RestApiChanged for people before RestApiDefined/);
});

test.run();
