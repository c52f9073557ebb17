/**
 * Turning HTML into its text: good enough for shingling, not a renderer.
 * @module
 */

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function decodeEntity(m: string, body: string): string {
  if (body[0] === '#') {
    const cp = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    return Number.isInteger(cp) && cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : m;
  }
  return NAMED[body.toLowerCase()] ?? m;
}

/**
 * The text of an HTML document: comments, `<script>`, `<style>`, `<head>` and tags are removed (a tag
 * becomes a space so words on either side stay apart), common entities are decoded.
 */
export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|head|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<\/?[a-zA-Z!][^>]*>/g, ' ')
    .replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+[0-9]*);/g, decodeEntity)
    .replace(/[ \t\r\n\f]+/g, ' ')
    .trim();
}
