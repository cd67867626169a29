import Router from '@koa/router';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../openapi/document.ts';
import type { AppState } from '../state.ts';

/** The service's version from the nearest package.json up the tree (the source tree and dist/ sit at different depths). */
const packageVersion = (): string => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0.0.0';
  }
  return '0.0.0';
};

/** `GET /openapi.json`: the OpenAPI 3.1 document, public (it holds no secret), made once when the app is. */
export const openApiRoutes = () => {
  const body = JSON.stringify(openApiDocument(packageVersion()));
  const router = new Router<AppState>();
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = body;
  });
  return router;
};
