// Globals of the browser scripts (src/web/tsconfig.json only; not part of the Node build).
import type * as PlotModule from '@observablehq/plot';

declare global {
  /** Observable Plot, loaded as a vendor script before the page's own scripts. */
  const Plot: typeof PlotModule;
  /** Defined by diffView.js: two texts side by side, word differences and shared passages marked. */
  const neardupDiff: {
    compare(left: { title: string; text: string; note?: string }, right: { title: string; text: string; note?: string }, passages: unknown[]): { element: HTMLElement; [k: string]: unknown };
    [k: string]: unknown;
  };
  interface Window {
    neardupDiff: typeof neardupDiff;
  }
}
