/**
 * Uploads of PDFs over HTTP with SVC_PDF_CONCURRENCY=1 and SVC_PDF_QUEUE=0: while one PDF is being
 * read, another is stored at once without its PDF properties (and the upload answers 201); once the
 * reader is free again, PDFs get their properties.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pdf } from '../../support/file-samples.ts';
import { startFilesService, stored, upload, type FilesService } from './support.ts';

const test = suite<{ svc: FilesService }>('PDF reads at once (HTTP)', {} as { svc: FilesService });
test.before(async (ctx) => {
  ctx.svc = await startFilesService({ env: { SVC_PDF_CONCURRENCY: '1', SVC_PDF_QUEUE: '0' } });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

/** Process ids of this process's PDF reading children (Linux /proc). */
const pdfReaders = (): number[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // The parent's id is the 4th field, after the command name in parentheses (which may hold spaces).
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('pdf-process');
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);

const waitFor = async (what: string, condition: () => boolean, timeoutMs = 120_000) => {
  for (const end = Date.now() + timeoutMs; !condition(); await sleep(20)) {
    if (Date.now() > end) assert.unreachable(`timed out waiting for ${what}`);
  }
};

test('a PDF uploaded while the only reader is busy and nobody may wait is stored at once without PDF properties', async ({ svc }) => {
  assert.equal(pdfReaders(), [], 'no reader yet');
  // Ten million drawing operations keep the reader busy for seconds (until its heap limit stops the drawing).
  const busy = upload(svc, await pdf(1, [300, 400], { draw: '0 0 1 1 re', drawTimes: 10_000_000 }), 'busy.pdf', 'application/pdf');
  await waitFor('the first PDF to be read', () => pdfReaders().length === 1);

  const refused = await stored(svc, await pdf(2), 'while busy.pdf', 'application/pdf');
  assert.equal(refused.properties, {}, 'no PDF properties, no thumbnail');
  assert.ok(pdfReaders().length <= 1, 'no second reader');

  assert.is((await busy).status, 201);
  await waitFor('the reader to exit', () => pdfReaders().length === 0);
  const read = await stored(svc, await pdf(3), 'after.pdf', 'application/pdf');
  assert.is(read.properties.numberOfPages, 3);
  assert.ok(read.properties.thumbnail, 'a thumbnail');
});

test('uploads of PDFs one after another are each read', async ({ svc }) => {
  for (const pages of [4, 5]) {
    const file = await stored(svc, await pdf(pages), `${pages} pages.pdf`, 'application/pdf');
    assert.is(file.properties.numberOfPages, pages);
  }
});

test.run();
