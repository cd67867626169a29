import { suite } from 'uvu';
import { restApiStream, type RestApiEvent } from '../../src/domain/rest-apis.ts';
import { restApisProjector } from '../../src/projections/rest-apis-projector.ts';
import { REST_APIS, type RestApiDoc } from '../../src/projections/read-models.ts';
import { decode, givenAt, projectionSpec, type GivenEvent } from '../support/projection-spec.ts';

const test = suite('projections: REST APIs');
const apis = projectionSpec(restApisProjector(decode));

const api = (event: RestApiEvent): GivenEvent => ({ ...event, stream: restApiStream(event.data.url) });
const control: RestApiDoc['control'] = { dataImportControlFileVersion: 0, model: 'svc:person', files: {}, instructions: [] };
const defined = api({ type: 'RestApiDefined', data: { url: 'people', description: 'People from HR', enabled: true, response: 'JSON', control } });
const people: RestApiDoc = { id: 'people', url: 'people', description: 'People from HR', enabled: true, response: 'JSON', control, createdAt: givenAt(0), updatedAt: givenAt(0) };

test('a defined API is one document under its URL', async () => {
  await apis.given([defined]).thenDocs(REST_APIS, [people]);
});

test('a changed API: the given fields and the update time change, the creation time stays', async () => {
  await apis
    .given([defined, api({ type: 'RestApiChanged', data: { url: 'people', enabled: false, response: 'XML' } })])
    .thenDocs(REST_APIS, [{ ...people, enabled: false, response: 'XML', updatedAt: givenAt(1) }]);
});

test('APIs are folded apart', async () => {
  const other = api({ type: 'RestApiDefined', data: { url: 'projects', description: 'Projects', enabled: false, response: 'XML', control } });
  await apis
    .given([defined, other, api({ type: 'RestApiChanged', data: { url: 'people', description: 'People' } })])
    .thenDocs(REST_APIS, [
      { ...people, description: 'People', updatedAt: givenAt(2) },
      { id: 'projects', url: 'projects', description: 'Projects', enabled: false, response: 'XML', control, createdAt: givenAt(1), updatedAt: givenAt(1) },
    ]);
});

test.run();
