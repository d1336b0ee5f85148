/** The offline tools, recording the `focus` each summary was asked with. */
import { createOfflineTools } from '../../src/tools/offline.js';
import type { ContextTools } from '../../src/tools/types.js';

export function focusRecorder(): { tools: ContextTools; focuses: Array<string | undefined> } {
  const offline = createOfflineTools();
  const focuses: Array<string | undefined> = [];
  const tools: ContextTools = {
    ...offline,
    summarize: (entries, options) => {
      focuses.push(options.focus);
      return offline.summarize(entries, options);
    },
  };
  return { tools, focuses };
}
