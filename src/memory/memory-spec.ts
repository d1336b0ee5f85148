/**
 * The memory tool's name, description and argument schema: what every format's definition of
 * the tool says (src/formats/<format>/tools.ts).
 */
import { type ToolShapes, toolShapes } from '../messages/tool-shapes.js';

/** The tool's name. */
export const MEMORY_TOOL_NAME = 'memory';

/**
 * What the tool does, for models that do not know the native tool: the same directory and
 * commands, described in words.
 */
export const MEMORY_TOOL_DESCRIPTION =
  'Your persistent memory: a directory /memories of text files that outlives this conversation and ' +
  'its context window. View /memories before starting a task to pick up earlier progress; record ' +
  'what you learn, decisions and progress as you go, since anything not written here may be lost. ' +
  'Commands: view (a directory listing, or a file with line numbers; view_range [start, end] for ' +
  'part of a file), create (a new file with file_text), str_replace (replace old_str, which must ' +
  'appear exactly once, by new_str), insert (insert_text after line insert_line, 0 for the top), ' +
  'delete (a file or a directory), rename (old_path to new_path). Every path starts with /memories/.';

/** The JSON Schema of the tool's arguments (every command's fields; `command` says which apply). */
export const MEMORY_TOOL_PARAMETERS = {
  type: 'object',
  properties: {
    command: {
      type: 'string',
      enum: ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'],
      description: 'What to do.',
    },
    path: {
      type: 'string',
      description: 'The file or directory, under /memories (view, create, str_replace, insert, delete).',
    },
    view_range: {
      type: 'array',
      items: { type: 'integer' },
      minItems: 2,
      maxItems: 2,
      description: 'view: the first and last line to show (1-based; -1 as the last for the rest).',
    },
    file_text: { type: 'string', description: 'create: the content of the new file.' },
    old_str: { type: 'string', description: 'str_replace: the text to replace; must appear exactly once.' },
    new_str: { type: 'string', description: 'str_replace: the text to put in its place.' },
    insert_line: {
      type: 'integer',
      minimum: 0,
      description: 'insert: the line after which to insert (0 inserts at the top).',
    },
    insert_text: { type: 'string', description: 'insert: the lines to insert.' },
    old_path: { type: 'string', description: 'rename: the file or directory to move.' },
    new_path: { type: 'string', description: 'rename: where to move it; must not exist yet.' },
  },
  required: ['command'],
  additionalProperties: false,
} as const;

/**
 * The tool in every provider's function-tool shape: what each format's `tools.ts` exports as its
 * memory tool (Anthropic's is the native one instead).
 */
export const MEMORY_TOOL_SHAPES: ToolShapes = toolShapes(
  MEMORY_TOOL_NAME,
  MEMORY_TOOL_DESCRIPTION,
  MEMORY_TOOL_PARAMETERS,
);
