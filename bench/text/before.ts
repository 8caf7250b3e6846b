/**
 * The text passes as they were before issue 29, kept verbatim as the reference that the linear
 * versions are compared with: equivalence tests (on inputs where these finish quickly) and the
 * side-by-side benchmark. Never used by the service.
 */

/** `plainText` before issue 29: a chain of regular expressions, some quadratic (`^\s*` with /gm, `[^\]]*`, `[^>]*`). */
export function plainTextBefore(markdown: string): string {
  return markdown
    .replace(/\r\n?/g, '\n')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/^\s*(```|~~~).*$/gm, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/^\s*\[[^\]]+\]:\s+\S+.*$/gm, ' ')
    .replace(/<https?:\/\/[^>\s]+>/g, ' ')
    .replace(/<\/?[a-zA-Z][^>]*>/g, ' ')
    .replace(/^\s{0,3}(#{1,6}|>+|[-*+]|\d+[.)])\s+/gm, '')
    .replace(/^\s*([-*_]\s*){3,}$/gm, ' ')
    .replace(/(\*\*|__|~~|`+)/g, '')
    .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/gm, '$1$2')
    .replace(/&(nbsp|amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e] ?? ' ')
    .replace(/\|/g, ' ')
    .replace(/[ \t\f\v]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .trim();
}

/** The leading-heading pattern of `parse-files.ts` before issue 29 (cubic on a heading of spaces). */
export const HEADING_BEFORE = /^\s*#\s+(.+?)\s*#*\s*(\n|$)/;
