/**
 * `contextkit/parts`: the building blocks `ContextManager` is composed of, for code that assembles
 * its own: the stored log (`History`), the atoms a conversation is cut into (`buildAtoms`,
 * `AtomIndex`), what compaction may touch (`protectionsOf`), the `Planner` (entries, atoms, budget
 * and previous plan in; a plan out) and the `View` (a plan rendered into messages), with the
 * helpers they share. `ContextGuard` and `ContextMeasurer`, the seeds' two classes, stay at the root.
 */

export { decodePlan, encodePlan } from './compaction/plan.js';
export { Planner } from './compaction/planner.js';
export { protectionsOf } from './compaction/protections.js';
export { LEVELS, levelOf } from './compaction/zones.js';
export { isCompactionItem, MAX_ENCRYPTED_CONTENT } from './formats/openai-responses/items.js';
export { appliedEditsOf } from './guard/applied-edits.js';
export { createCalibration } from './guard/calibration.js';
export { History } from './history/history.js';
export { AtomIndex, buildAtoms } from './messages/atoms.js';
export {
  hasNonToolResultContent,
  hasToolCalls,
  isToolResultMessage,
  messageText,
  toolCallIds,
  toolResultIds,
} from './messages/content.js';
export {
  detectConversationFormat,
  detectMessageFormat,
  resolveConversationFormat,
} from './messages/detect.js';
export { messageProblems } from './messages/validate-message.js';
export { metaPersistence } from './stores/meta-persistence.js';
export { PlanBlocks } from './view/plan-blocks.js';
export { NOTICE_RESERVE, View } from './view/view.js';
