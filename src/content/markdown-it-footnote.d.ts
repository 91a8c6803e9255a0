// The DefinitelyTyped package types this plugin against markdown-it's CommonJS types, which an ES
// module's MarkdownIt does not match: the plugin's one export, typed against the ES module's.
declare module 'markdown-it-footnote' {
  import type { PluginSimple } from 'markdown-it';

  const footnote: PluginSimple;
  export default footnote;
}
