import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin as EsbuildPlugin } from 'esbuild';

/**
 * The import suffix that turns a browser entry (`./script/admin-jobs.ts?page-bundle`)
 * into its bundled text: the default export is one ES module as a string,
 * served by the admin app as `/admin/jobs/assets/admin-jobs.js`.
 */
export const PAGE_BUNDLE_SUFFIX = '?page-bundle';

/** The package root: esbuild's working folder, so the bundle (its path comments) is the same from any cwd. */
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Bundles one browser entry with esbuild (ES2022 module, sibling packages from source). */
export async function bundlePageScript(entry: string): Promise<{ text: string; inputs: string[] }> {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: PACKAGE_ROOT,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: ['@oxicloud/source'],
    charset: 'utf8',
    legalComments: 'none',
    // Whitespace only: names and structure stay readable in the browser's devtools.
    minifyWhitespace: true,
    metafile: true,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]?.text;
  if (text === undefined) throw new Error(`esbuild produced no output for ${entry}`);
  return { text, inputs: Object.keys(result.metafile.inputs).map((input) => resolve(PACKAGE_ROOT, input)) };
}

/** The module a `?page-bundle` import becomes. */
function moduleOf(text: string): string {
  return `export default ${JSON.stringify(text)};\n`;
}

/** tsup/esbuild: resolves `*?page-bundle` imports to the bundled text. */
export function pageBundleEsbuildPlugin(): EsbuildPlugin {
  return {
    name: 'oxicloud-page-bundle',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /\?page-bundle$/ }, (args) => ({
        path: resolve(args.resolveDir, args.path.slice(0, -PAGE_BUNDLE_SUFFIX.length)),
        namespace: 'page-bundle',
      }));
      pluginBuild.onLoad({ filter: /.*/, namespace: 'page-bundle' }, async (args) => {
        const { text, inputs } = await bundlePageScript(args.path);
        return { contents: moduleOf(text), loader: 'js', resolveDir: dirname(args.path), watchFiles: inputs };
      });
    },
  };
}

/** vite/vitest: the same for tests that run the sources. */
export function pageBundleVitePlugin(): {
  name: string;
  enforce: 'pre';
  load(id: string): Promise<string | undefined>;
} {
  return {
    name: 'oxicloud-page-bundle',
    enforce: 'pre',
    async load(id) {
      if (!id.endsWith(PAGE_BUNDLE_SUFFIX)) return undefined;
      const { text } = await bundlePageScript(id.slice(0, -PAGE_BUNDLE_SUFFIX.length));
      return moduleOf(text);
    },
  };
}
