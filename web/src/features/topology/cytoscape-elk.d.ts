// cytoscape-elk ships no typings: it is a cytoscape extension registering the 'elk' layout.
declare module 'cytoscape-elk' {
  import type { Ext } from 'cytoscape';
  const extension: Ext;
  export default extension;
}
