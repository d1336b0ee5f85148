/**
 * The `recall` tool's name, description and argument schema: what every format's definition of
 * the tool says (src/formats/<format>/tools.ts).
 */
import { type ToolShapes, toolShapes } from '../messages/tool-shapes.js';

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

/** The JSON Schema of the tool's arguments: a query, and optional filters and paging. */
export const RECALL_TOOL_PARAMETERS = {
  type: 'object',
  properties: {
    query: {
      type: 'string',
      description:
        'What to look for: a few words, names or dates, e.g. "Caroline adoption agency" or "order W123 refund".',
    },
    role: {
      type: 'string',
      enum: ['user', 'assistant', 'tool', 'system'],
      description: 'Only turns from this role (tool: tool results).',
    },
    tool_name: {
      type: 'string',
      description: 'Only calls of this tool and their results.',
    },
    start_date: {
      type: 'string',
      description: 'Only turns from this date on, ISO 8601: "2024-05-01" or "2024-05-01T14:00:00Z".',
    },
    end_date: {
      type: 'string',
      description: 'Only turns up to this date, ISO 8601 ("2024-05-31" includes that whole day).',
    },
    from_seq: {
      type: 'integer',
      minimum: 0,
      description: 'Only turns from this message number on (the #numbers results show).',
    },
    to_seq: {
      type: 'integer',
      minimum: 0,
      description: 'Only turns up to this message number.',
    },
    offset: {
      type: 'integer',
      minimum: 0,
      description: 'Results to skip, for the next page of the same search (e.g. 5 after the first five).',
    },
  },
  required: ['query'],
  additionalProperties: false,
} as const;

/** The tool in every provider's shape: what each format's `tools.ts` exports as its recall tool. */
export const RECALL_TOOL_SHAPES: ToolShapes = toolShapes(
  RECALL_TOOL_NAME,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_PARAMETERS,
);
