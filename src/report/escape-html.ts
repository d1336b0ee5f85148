/**
 * Text placed into HTML, made inert: conversation text in a report (a message, a fact, a tool
 * name, a file name) must read as text, never as markup, whatever it contains.
 */

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes the five characters that matter in element text and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}
