/** Stored files: the list and one file's page (with a signed download link, as the File API gives). */
import type Router from '@koa/router';
import type { DownloadSigner } from '../../../blobs/signed-urls.ts';
import { DIGEST, FILE_SIZE } from '../../../domain/files/files.ts';
import type { ReadStore } from '../../../projections/read-store.ts';
import { pageFiles } from '../../../queries/admin-lists.ts';
import { findFile } from '../../../queries/file-api.ts';
import type { AppState } from '../../state.ts';
import type { PageGuard } from '../guard.ts';
import { notFoundPage } from '../pages/general.ts';
import { fileDetails, fileList } from '../pages/files.ts';
import { pageRequest, searchText } from '../paging.ts';
import { render } from '../respond.ts';

export const filePages = (router: Router<AppState>, page: PageGuard, deps: { reads: ReadStore; signer: DownloadSigner }) => {
  router.get(
    '/files',
    page(async (ctx, s) => {
      // Not lowercased: file names are case-sensitive (a digest prefix matches in either case).
      const q = searchText(ctx);
      const list = await pageFiles(deps.reads, q, pageRequest(ctx));
      render(ctx, s, 200, 'Files', 'files', fileList({ page: list, q }));
    }),
  );

  router.get(
    '/files/:id',
    page(async (ctx, s) => {
      const id = ctx.params.id!;
      const dash = id.lastIndexOf('-');
      const digest = id.slice(0, dash);
      const size = id.slice(dash + 1);
      const file = dash > 0 && DIGEST.test(digest) && FILE_SIZE.test(size) ? await findFile(deps.reads, digest, Number(size)) : null;
      if (!file) return render(ctx, s, 404, 'Not found', 'files', notFoundPage(`There is no file ${id}.`));
      const { url, validUntil } = deps.signer.sign(file);
      // Served by this same service: a path keeps the link working whatever SVC_BASE_URL says.
      const signed = new URL(url);
      render(ctx, s, 200, `File ${file.filename}`, 'files', fileDetails({ file, download: { url: signed.pathname + signed.search, validUntil } }));
    }),
  );
};
