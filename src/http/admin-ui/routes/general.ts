/** The admin interface's files (CSS, script), its home, and the page for any other path. */
import type Router from '@koa/router';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../../../config/paths.ts';
import type { AppState } from '../../state.ts';
import type { PageGuard } from '../guard.ts';
import { notFoundPage } from '../pages/general.ts';
import { redirect, render, securityHeaders } from '../respond.ts';

/** The admin interface files: in admin-ui/assets beside this folder (tsx, or a build that copies them), else in the source tree. */
const loadAsset = (name: string): { body: Buffer; etag: string } => {
  const candidates = [fileURLToPath(new URL(`../assets/${name}`, import.meta.url)), resolve(projectRoot, 'src/http/admin-ui/assets', name)];
  for (const file of candidates) {
    try {
      const body = readFileSync(file);
      return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
    } catch {
      // try the next place
    }
  }
  throw new Error(`admin interface asset ${name} not found (looked in ${candidates.join(', ')})`);
};

const ASSET_TYPES: Readonly<Record<string, string>> = { 'admin.css': 'text/css; charset=utf-8', 'admin.js': 'text/javascript; charset=utf-8' };

/** `/admin/assets/:file` (public, revalidated by ETag) and `/admin` itself. */
export const generalPages = (router: Router<AppState>, page: PageGuard) => {
  const assets = new Map(Object.keys(ASSET_TYPES).map((name) => [name, loadAsset(name)]));

  router.get('/assets/:file', (ctx) => {
    const asset = assets.get(ctx.params.file!);
    securityHeaders(ctx);
    if (!asset) {
      ctx.status = 404;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'Not found';
      return;
    }
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', asset.etag);
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = ASSET_TYPES[ctx.params.file!]!;
    ctx.body = asset.body;
  });

  router.get('/', page((ctx) => redirect(ctx, '/admin/rest-apis')));
};

/** Anything else under /admin: behind the session like the rest, then a page that says so. Registered last. */
export const notFoundPages = (router: Router<AppState>, page: PageGuard) => {
  router.all(
    '/{*rest}',
    page((ctx, s) => render(ctx, s, 404, 'Not found', 'none', notFoundPage(`There is no page at ${ctx.path}.`))),
  );
};
