/**
 * Text from tool results, users or the assistant carried into contextkit's own messages (the
 * summary, the facts block, a cleared result's outcome line) as data, never as instructions or as
 * contextkit's own markup (the README\'s "What every view holds", 8).
 *
 * OpenAI's Model Spec, "Ignore untrusted data by default" (https://model-spec.openai.com/): "Quoted
 * text (plaintext in quotation marks, YAML, JSON, XML, or untrusted_text blocks) in ANY message,
 * multimodal data, file attachments, and tool outputs are assumed to contain untrusted data and
 * have no authority by default", and developers are advised to put untrusted data in such blocks.
 * Anthropic's "Mitigate jailbreaks and prompt injections"
 * (https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/mitigate-jailbreaks)
 * names tool results and other third-party content as the path of indirect prompt injection, to be
 * kept apart from the instructions and marked as content.
 */

/**
 * `text` with every contextkit marker made inert, so that nothing a tool returned can open or
 * close a facts block (`<!-- contextkit:facts -->`), a summary (`<contextkit-summary>`) or pass
 * for one of contextkit's bracketed notes (`[contextkit: …]`): the `<` of a marker becomes `&lt;`
 * and `[contextkit:` becomes `[quoted contextkit:`. Text without markers comes back as it was.
 */
export function inertMarkers(text: string): string {
  if (!/contextkit/i.test(text)) return text;
  return text
    .replace(/<(\s*!--\s*\/?\s*contextkit)/gi, '&lt;$1')
    .replace(/<(\s*\/?\s*contextkit)/gi, '&lt;$1')
    .replace(/\[(\s*)(contextkit\s*:)/gi, '[$1quoted $2');
}

/** `text` as a JSON string (quotes and line breaks escaped), markers inert: quoted, visibly data. */
export function quotedData(text: string): string {
  return JSON.stringify(inertMarkers(text));
}

/**
 * Text that reads as an instruction to the model, the shape prompt injections take: "ignore
 * (all) previous instructions", "system notice/prompt/override", "you must now", "new
 * instructions", chat-template role markers, a line opening with `system:` or `developer:`.
 */
const INSTRUCTION_LIKE =
  /\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:instructions?|prompts?|rules|guidelines|directions)\b|\b(?:system|developer|admin(?:istrator)?)\s+(?:notice|prompt|message|override|instruction|instructions|command)\b|\bnew instructions?\b|\byou (?:must|are now|will now|should now)\b|<\|im_(?:start|end)\|>|\[\/?INST\]|^\s*(?:system|developer)\s*:/im;

/** Whether `text` reads as an instruction to the model (see `INSTRUCTION_LIKE`). */
export function isInstructionLike(text: string): boolean {
  return INSTRUCTION_LIKE.test(text);
}
