// Globals of the browser scripts (src/web/tsconfig.json only; not part of the Node build).
import type * as PlotModule from '@observablehq/plot';

declare global {
  /** Observable Plot, loaded as a vendor script before the page's own scripts. */
  const Plot: typeof PlotModule;
  /** Defined by highlight.js: texts side by side with their shared passages marked. */
  const neardupHighlight: {
    highlighted(text: string, passages: unknown[], side: 'a' | 'b'): HTMLDivElement;
    sideBySide(left: { title: string; text: string; note?: string }, right: { title: string; text: string; note?: string }, passages: unknown[]): HTMLElement;
    linkPassages(root: HTMLElement): void;
  };
  interface Window {
    neardupHighlight: typeof neardupHighlight;
  }
}
