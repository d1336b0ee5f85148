/**
 * A separate process for the Agents session's restart test: on the file store in DIR, the
 * session `restart` gets a few turns, then `clearSession()`, as `OpenAIResponsesCompactionSession`
 * does before writing back what `responses.compact` returned; then the process exits at once,
 * before that write-back or any other call.
 * Usage: node --import tsx test/support/agents-session-clear.ts DIR
 */

import { ContextkitSession } from '../../src/integrations/openai-agents/session.js';

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: agents-session-clear.ts DIR');
const session = new ContextkitSession({ store: `file:${dir}`, conversationId: 'restart', model: 'gpt-5' });
for (let i = 0; i < 3; i++) {
  await session.addItems([
    { role: 'user', content: `question ${i}: where is parcel PX-${4410 + i}?` },
    {
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: `Parcel PX-${4410 + i} is at depot ${i}.` }],
    },
  ]);
}
await session.clearSession();
process.exit(0);
