// Node module hooks that run this repository's TypeScript sources as they are, the way a
// consumer's `npx tsx` runs an example: `.ts` files are transpiled (esbuild, types dropped)
// and a source's `./x.js` import finds `./x.ts`. Packages resolve through the
// `@oxicloud/source` export condition (node --conditions=@oxicloud/source), so no build is
// needed. Registered by run-example.ts; not a test-only switch of any package.
import { readFile } from 'node:fs/promises';
import { transform } from 'esbuild';

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const fromSource = context.parentURL?.endsWith('.ts') && /^\.\.?\//.test(specifier);
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !fromSource || !specifier.endsWith('.js')) throw error;
    return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
  }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const source = await readFile(new URL(url), 'utf8');
  const { code } = await transform(source, {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: url,
    sourcemap: 'inline',
  });
  return { format: 'module', source: code, shortCircuit: true };
}
