import { suite } from 'uvu';
import { fileStream, type FileEvent } from '../../src/domain/files/files.ts';
import { filesProjector } from '../../src/projections/files-projector.ts';
import { FILES, type FileDoc } from '../../src/projections/read-models.ts';
import { decode, givenAt, projectionSpec, type GivenEvent } from '../support/projection-spec.ts';

const test = suite('projections: files');
const files = projectionSpec(filesProjector(decode));

const DIGEST = 'a'.repeat(64);
const file = (event: FileEvent): GivenEvent => ({ ...event, stream: fileStream(event.data.digest, event.data.fileSize) });
const stored = file({
  type: 'FileStored',
  data: { digest: DIGEST, fileSize: 1234, mimeType: 'image/png', filename: 'plan.png', properties: { dimensions: { width: 20, height: 10, units: 'px' } } },
});
const plan: FileDoc = {
  id: `${DIGEST}-1234`,
  digest: DIGEST,
  fileSize: 1234,
  mimeType: 'image/png',
  filename: 'plan.png',
  properties: { dimensions: { width: 20, height: 10, units: 'px' } },
  createdAt: givenAt(0),
  tags: {},
};
const tags = (changes: Record<string, string | null>, fileSize = 1234) => file({ type: 'FileTagsChanged', data: { digest: DIGEST, fileSize, tags: changes } });

test('a stored file is one document under its digest and size, without tags', async () => {
  await files.given([stored]).thenDocs(FILES, [plan]);
});

test('tag changes set and delete tags', async () => {
  await files.given([stored, tags({ project: 'engines', draft: 'yes' }), tags({ draft: null, project: 'steam' })]).thenDocs(FILES, [{ ...plan, tags: { project: 'steam' } }]);
});

test('the same bytes stored again keep the first name, type and time', async () => {
  const again = file({ type: 'FileStored', data: { digest: DIGEST, fileSize: 1234, mimeType: 'application/octet-stream', filename: 'copy.bin', properties: {} } });
  await files.given([stored, tags({ project: 'engines' }), again]).thenDocs(FILES, [{ ...plan, tags: { project: 'engines' } }]);
});

test('the same digest with another size is another file', async () => {
  const other = file({ type: 'FileStored', data: { digest: DIGEST, fileSize: 99, mimeType: 'text/plain', filename: 'a.txt', properties: {} } });
  await files
    .given([stored, other, tags({ kind: 'note' }, 99)])
    .thenDocs(FILES, [plan, { id: `${DIGEST}-99`, digest: DIGEST, fileSize: 99, mimeType: 'text/plain', filename: 'a.txt', properties: {}, createdAt: givenAt(1), tags: { kind: 'note' } }]);
});

test.run();
