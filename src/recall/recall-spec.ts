/**
 * The `recall` tool's name, description and argument schema: what every format's definition of
 * the tool says (src/formats/<format>/tools.ts).
 */

/** The tool's name. */
export const RECALL_TOOL_NAME = 'recall';

/** What the tool does, for the model. */
export const RECALL_TOOL_DESCRIPTION =
  'Search the whole conversation so far, including earlier messages that are no longer shown to you, ' +
  'tool calls and tool results, for what was said about something: names, places, dates, numbers, ' +
  'ids, decisions. Returns the most relevant past turns, each with the turns around it. Use it ' +
  'before saying you do not know something the conversation may have covered.';

/**
 * The sentence the facts or summary block carries when the tool is offered, so the model knows
 * that what left its view can still be looked up.
 */
export const RECALL_NOTE =
  'Earlier turns are not all shown here, but none is lost: call the recall tool with a few words ' +
  '(a name, a date, a subject) to search the whole conversation, tool results included.';

/** The JSON Schema of the tool's arguments. */
export const RECALL_TOOL_PARAMETERS = {
  type: 'object',
  properties: {
    query: {
      type: 'string',
      description:
        'What to look for: a few words, names or dates, e.g. "Caroline adoption agency" or "order W123 refund".',
    },
  },
  required: ['query'],
  additionalProperties: false,
} as const;
