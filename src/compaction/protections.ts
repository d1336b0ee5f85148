import type { WireFormat } from '../formats/wire-format.js';
import type { HistoryEntry, Message } from '../messages/types.js';
import type { Atom } from '../wire/atoms.js';
import type { Protection } from './draft.js';

/** The index of the atom holding the conversation's first user message (the task), or -1. */
export function taskAtomIndex(atoms: readonly Atom[]): number {
  return atoms.findIndex((atom) => atom.hasUserContent);
}

/** The index of the atom holding the latest user message (the current turn starts there), or -1. */
export function latestUserAtomIndex(atoms: readonly Atom[]): number {
  for (let i = atoms.length - 1; i >= 0; i--) if (atoms[i]!.hasUserContent) return i;
  return -1;
}

/** Whether the user marked a message of `atom` `critical` or `pinned`: kept verbatim, never cut. */
export function userMarked(atom: Atom, entries: readonly HistoryEntry[]): boolean {
  return atom.seqs.some((s) => {
    const m = entries[s]?.metadata;
    return !!(m?.critical || m?.pinned);
  });
}

/**
 * How far compaction may touch each atom: system messages (with `preserveSystem`), `critical` and
 * `pinned` messages, the first user message (the task, with `protectTask`, the default: compaction
 * is where agents lose their instructions), the latest user message and a server compaction item
 * stay verbatim; the current turn (everything after the latest user message: the agent's calls,
 * results and notes, its work in progress) and an atom still open are kept, so that older turns
 * give way to it first (see `clearTurnResults` for when it is itself over the budget); the rest
 * may go. A conversation with no user message has no turn: only its last exchange is kept.
 */
export function protectionsOf(
  atoms: readonly Atom[],
  entries: readonly HistoryEntry[],
  wire: WireFormat<Message>,
  preserveSystem: boolean,
  protectTask = true,
): Protection[] {
  const task = protectTask ? taskAtomIndex(atoms) : -1;
  const verbatimSeqs = (atom: Atom) => userMarked(atom, entries);
  const latestUser = latestUserAtomIndex(atoms);
  let inProgress = -1;
  for (let i = atoms.length - 1; i > latestUser; i--) {
    if (atoms[i]!.kind === 'exchange') {
      inProgress = i;
      break;
    }
  }
  const holdsCompaction = wire.holdsCompaction;
  return atoms.map((atom, i) => {
    if (atom.kind === 'system' && preserveSystem) return 'verbatim';
    // A server compaction item (OpenAI) or block (Anthropic) carries everything before it: never
    // edited, never left out.
    const server = holdsCompaction !== undefined && atom.messages.some((m) => holdsCompaction(m));
    if (i === latestUser || i === task || verbatimSeqs(atom) || server) return 'verbatim';
    if (i === inProgress || atom.open || (latestUser >= 0 && i > latestUser)) return 'keep';
    return 'none';
  });
}
