import { statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openEngines } from '../../src/app/engines.ts';
import { loadConfig } from '../../src/config/config.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('engines');

// The CLI and every role open the engines; whoever creates the data directory makes it private.
test('a data directory the engines create is 0700, its databases 0600', async () => {
  const tmp = tempDir('svc-engines');
  const dataDir = join(tmp.dir, 'new', 'data');
  const previous = process.umask(0o022);
  try {
    const engines = await openEngines(loadConfig({ SVC_DATA_DIR: dataDir }));
    await engines.close();
    assert.is(statSync(dataDir).mode & 0o777, 0o700);
    assert.is(statSync(join(dataDir, 'events.db')).mode & 0o777, 0o600);
  } finally {
    process.umask(previous);
    tmp.remove();
  }
});

test.run();
