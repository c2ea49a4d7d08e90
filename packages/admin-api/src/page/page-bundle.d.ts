/** A browser entry bundled by the build into one ES module, as text (build/page-bundle.ts). */
declare module '*?page-bundle' {
  const script: string;
  export default script;
}
