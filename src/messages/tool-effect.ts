/**
 * Whether a tool only reads or may change something, for the words that stand in for its cleared
 * result (the README\'s "What every view holds", 9): a placeholder may suggest calling a tool again only when a
 * second call cannot repeat a side effect. A model that reads "call edit again" redoes the edit.
 */

/** `read`: calling again only reads again. `write`: a call may change something (the default). */
export type ToolEffect = 'read' | 'write';

/** Which tools only read and which change something, by exact name (`readOnlyTools`, `sideEffectTools`). */
export interface ToolEffectOptions {
  /** Tools that only read: a cleared result of theirs suggests calling again. */
  readOnlyTools?: readonly string[];
  /** Tools that change something: their placeholders never suggest calling again. Wins over `readOnlyTools`. */
  sideEffectTools?: readonly string[];
}

/**
 * Words of a tool's name that mark a tool that only reads (`read_file`, `getUser`, `search-docs`,
 * `fetch_url`, `grep`, `ls`). contextkit's own `recall` reads the history.
 */
const READ_WORDS = new Set([
  'read',
  'get',
  'list',
  'ls',
  'search',
  'fetch',
  'open',
  'view',
  'cat',
  'grep',
  'rg',
  'find',
  'glob',
  'lookup',
  'look',
  'query',
  'show',
  'describe',
  'inspect',
  'stat',
  'head',
  'tail',
  'peek',
  'browse',
  'retrieve',
  'recall',
  'count',
  'check',
  'status',
  'diff',
  'info',
  'whoami',
  'calculate',
  'think',
]);

/**
 * Words that mark a change even beside a read word (`get_or_create`, `read_and_delete`,
 * `fetch_and_update`, `open_pull_request`): any of them makes the tool a writer.
 */
const WRITE_WORDS = new Set([
  'write',
  'edit',
  'create',
  'insert',
  'update',
  'upsert',
  'delete',
  'del',
  'remove',
  'rm',
  'set',
  'put',
  'post',
  'patch',
  'apply',
  'replace',
  'send',
  'run',
  'exec',
  'execute',
  'move',
  'mv',
  'copy',
  'cp',
  'rename',
  'commit',
  'push',
  'merge',
  'deploy',
  'book',
  'cancel',
  'pay',
  'transfer',
  'modify',
  'add',
  'append',
  'save',
  'submit',
  'install',
  'kill',
  'start',
  'stop',
  'reset',
  'drop',
  'mkdir',
  'touch',
  'chmod',
  'exchange',
  'return',
  'refund',
  'change',
  'mark',
  'close',
  'approve',
  'reject',
  'assign',
  'publish',
  'upload',
  'download',
  'clear',
  'memory',
  'compact',
]);

/** The words of a tool name: split at `_`, `-`, `.`, `/`, `:`, spaces and camelCase humps, lower-cased. */
export function toolNameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

/**
 * What `name` does by its name alone: `read` when one of its words is a read verb (read, get,
 * list, search, fetch, open, view, cat, grep, find, …) and none is a verb of change; `write`
 * otherwise, an unknown tool (`bash`, `str_replace_based_edit_tool`, `transfer_to_agent`)
 * included, since a placeholder that invites a repeat of a change does harm and one that does not
 * invite a repeated read costs at most one call.
 */
export function toolEffectByName(name: string): ToolEffect {
  const words = toolNameWords(name);
  if (words.some((w) => WRITE_WORDS.has(w))) return 'write';
  return words.some((w) => READ_WORDS.has(w)) ? 'read' : 'write';
}

/**
 * The classifier `options` describe: the names listed (exactly) first, `sideEffectTools` winning,
 * then `toolEffectByName`.
 */
export function toolEffectClassifier(options: ToolEffectOptions = {}): (name: string) => ToolEffect {
  const reads = new Set(options.readOnlyTools ?? []);
  const writes = new Set(options.sideEffectTools ?? []);
  if (reads.size === 0 && writes.size === 0) return toolEffectByName;
  return (name) => (writes.has(name) ? 'write' : reads.has(name) ? 'read' : toolEffectByName(name));
}
