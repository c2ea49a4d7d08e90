/**
 * The operator page at `/admin/jobs`: a static HTML shell, one ES module and
 * one stylesheet, served by {@link registerAdminPageRoutes}. Every datum it
 * shows comes from `/api/admin/jobs*` with the operator's token.
 */
export type { AdminPageAssetUrls } from './page-html.js';
export {
  ADMIN_PAGE_ASSETS_PATH,
  ADMIN_PAGE_CSP,
  ADMIN_PAGE_PATH,
  adminPageSize,
  registerAdminPageRoutes,
} from './page-routes.js';
