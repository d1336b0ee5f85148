import { ContextkitSession } from '../src/integrations/openai-agents/session.ts';
import { ContextkitChatMessageHistory } from '../src/integrations/langchain/chat-message-history.ts';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
const s = new ContextkitSession({ store: 'memory:' });
try { await s.addItems([{ role: 'user', content: 'x', providerData: { score: NaN, neg: -0, big: 1e400 } } as any]); console.log('session accepted'); } catch (e) { console.log('session:', e.constructor.name, e.message); }
const h = new ContextkitChatMessageHistory({ sessionId: 'x' });
try { await h.addMessage(new HumanMessage({ content: 'x', additional_kwargs: { n: NaN } })); console.log('lc accepted'); } catch (e) { console.log('lc:', e.constructor.name, e.message); }
try { await h.addMessage(new ToolMessage({ content: 'x', tool_call_id: '' })); console.log('lc tool accepted'); } catch (e) { console.log('lc tool:', e.constructor.name, e.message); }
let deep: any = 1; for (let i = 0; i < 20000; i++) deep = { k: deep };
try { await h.addMessage(new HumanMessage({ content: 'x', additional_kwargs: { deep } })); console.log('lc deep accepted'); } catch (e) { console.log('lc deep:', e.constructor.name, e.message.slice(0, 200)); }
