/**
 * `npm run bench waits -- --part summaries`: requests that wait for the summarizer (issue 24,
 * item 1). A 1,000-request agent session at a 20k budget, with a fake model that answers each
 * summarizer call in 2 s (then 20 s), run with the summary asked at the compaction (the request
 * waits) and prepared ahead (`summaryAhead`), side by side.
 *
 * Time is virtual for the model: the fake `fetch` answers after the summarizer's latency on a
 * clock the benchmark advances by the agent's own model call between requests, and, while a
 * request is pending on the summarizer and nothing else moves, by as long as the request waits
 * (that wait counts in the request's time). Everything else is measured in real time.
 */

import { availableParallelism, loadavg } from 'node:os';
import type { CompactionReceipt } from '../src/events.js';
import { ContextManager } from '../src/manager.js';
import type { Message } from '../src/messages/types.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { VirtualClock } from '../test/support/virtual-clock.js';
import { formatCount, formatMs, type Report, verdict } from './report.js';
import { percentile } from './stats.js';

const SEED = 24;
const MODEL = 'gpt-4o';
const BUDGET = 20_000;
const REQUESTS = 1_000;
/** The agent's own model call between two requests (virtual time). */
const AGENT_CALL_MS = 1_000;

/**
 * A Chat Completions endpoint answering after `latencyMs` of the clock: a summary of the messages
 * (the first and last message numbers of the transcript), `[]` for a facts request, both as one
 * JSON object when the prompt asks for one.
 */
function fakeSummarizer(
  clock: VirtualClock,
  latencyMs: number,
): { fetch: typeof fetch; calls: () => number } {
  let calls = 0;
  const fakeFetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    calls++;
    const body = JSON.parse(String(init?.body)) as { messages: Array<{ content: string }> };
    const [system, user] = [body.messages[0]!.content, body.messages[1]!.content];
    await clock.sleep(latencyMs);
    const seqs = [...user.matchAll(/#(\d+)/g)].map((m) => Number(m[1]));
    const summary = `The model's summary of messages #${Math.min(...seqs)} to #${Math.max(...seqs)}: the user's requests, what was done, what is open.`;
    const content = system.includes('"summary"')
      ? JSON.stringify({ summary, facts: [] })
      : system.includes('JSON array')
        ? '[]'
        : summary;
    return new Response(
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    );
  };
  return { fetch: fakeFetch as typeof fetch, calls: () => calls };
}

const realTick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The session: the stored messages up to the `REQUESTS`th assistant message (a request before each). */
function sessionMessages(): Message[] {
  const all = longSessionMessages(REQUESTS * 5, 'openai', SEED);
  let requests = 0;
  const out: Message[] = [];
  for (const m of all) {
    if (m.role === 'assistant' && ++requests > REQUESTS) break;
    out.push(m);
  }
  return out;
}

interface RunResult {
  label: string;
  latencyMs: number;
  ms: number[];
  /** CPU time of each request (the process's, user and system): what a request costs on a loaded machine. */
  cpu: number[];
  addMs: number[];
  compactions: CompactionReceipt[];
  /** The compaction each request made, by request index. */
  receipts: Map<number, CompactionReceipt>;
  stable: number;
  compared: number;
  modelCalls: number;
}

async function run(messages: readonly Message[], latencyMs: number, ahead: boolean): Promise<RunResult> {
  const clock = new VirtualClock();
  const model = fakeSummarizer(clock, latencyMs);
  const ctx = new ContextManager({
    model: MODEL,
    maxTokens: BUDGET,
    llm: {
      provider: 'openai',
      baseURL: 'http://summarizer.invalid/v1',
      apiKey: 'k',
      model: 'small',
      fetch: model.fetch,
    },
    summaryAhead: ahead,
  });
  const compactions: CompactionReceipt[] = [];
  ctx.on('context:post_compact', (e) => compactions.push(e.receipt));
  const receipts = new Map<number, CompactionReceipt>();
  let compacted = 0;
  const ms: number[] = [];
  const cpu: number[] = [];
  const addMs: number[] = [];
  let previous: string[] | null = null;
  let stable = 0;
  let compared = 0;
  for (const message of messages) {
    if (message.role === 'assistant') {
      const start = performance.now();
      const cpuStart = process.cpuUsage();
      let end = 0;
      let cpuMs = 0;
      const pending = ctx.getMessagesForRequest().then((view) => {
        end = performance.now();
        const used = process.cpuUsage(cpuStart);
        cpuMs = (used.user + used.system) / 1000;
        return view;
      });
      // While the request is pending and nothing moves in real time, it waits for the summarizer.
      let waited = 0;
      let idle = 0;
      while (end === 0) {
        await realTick();
        if (end !== 0) break;
        const next = clock.next();
        if (++idle >= 3 && next !== undefined) {
          waited += next - clock.now;
          clock.advanceTo(next);
          idle = 0;
        }
      }
      const view = (await pending).map((m) => JSON.stringify(m));
      if (compactions.length > compacted) receipts.set(ms.length, compactions.at(-1)!);
      compacted = compactions.length;
      ms.push(end - start + waited);
      cpu.push(cpuMs);
      if (previous) {
        compared++;
        if (previous.every((m, i) => view[i] === m)) stable++;
      }
      previous = view;
      // The agent's own model call: the summarizer's answers due meanwhile come in.
      clock.advanceTo(clock.now + AGENT_CALL_MS);
      await realTick();
      await realTick();
    }
    const start = performance.now();
    await ctx.addMessage(message);
    addMs.push(performance.now() - start);
  }
  await ctx.close();
  return {
    label: ahead ? 'prepared ahead' : 'asked at the compaction',
    latencyMs,
    ms,
    cpu,
    addMs,
    compactions,
    receipts,
    stable,
    compared,
    modelCalls: model.calls(),
  };
}

/** Of the compactions that summarized messages, those whose summary is the model's whole, or in part. */
function authors(r: RunResult): { summarized: number; whole: number; part: number } {
  const summarized = r.compactions.filter((c) => c.summary);
  const tools = summarized.map((c) => c.summary!.tools.split('+'));
  return {
    summarized: summarized.length,
    whole: tools.filter((t) => t.length === 1 && t[0] !== 'offline').length,
    part: tools.filter((t) => t.length > 1 && t.some((k) => k !== 'offline')).length,
  };
}

/** Adds the summaries section to `report`. */
export async function summariesSection(report: Report, progress: (text: string) => void): Promise<void> {
  const startLoad = loadavg()[0] ?? 0;
  const messages = sessionMessages();
  // The encoder's tables loaded before anything is timed (a cold start is measured elsewhere).
  const warm = new ContextManager({ model: MODEL });
  await warm.addMessage({ role: 'user', content: 'warm up' });
  await warm.getMessagesForRequest();
  const results: RunResult[] = [];
  for (const latencyMs of [2_000, 20_000]) {
    for (const ahead of [false, true]) {
      progress(
        `summaries: model answering in ${latencyMs / 1000} s, ${ahead ? 'prepared ahead' : 'asked at the compaction'}…`,
      );
      results.push(await run(messages, latencyMs, ahead));
    }
  }
  report.heading(
    `Requests that wait for the summarizer: ${formatCount(REQUESTS)} requests at a ${formatCount(BUDGET)}-token budget`,
  );
  report.note(
    `Load average when this section started: ${startLoad.toFixed(1)} on ${availableParallelism()} cores.`,
  );
  const rows = results.map((r) => {
    const sorted = r.ms.slice().sort((a, b) => a - b);
    const who = authors(r);
    const cpu = r.cpu.slice().sort((a, b) => a - b);
    return [
      `${r.label}, model answers in ${r.latencyMs / 1000} s`,
      formatCount(r.compactions.length),
      `${who.whole} of ${who.summarized}`,
      `${who.part} of ${who.summarized}`,
      `${formatCount(r.modelCalls)} (${(r.modelCalls / Math.max(1, r.compactions.length)).toFixed(1)})`,
      formatMs(percentile(sorted, 0.5)),
      formatMs(percentile(sorted, 0.99)),
      formatMs(sorted.at(-1)!),
      formatMs(percentile(cpu, 0.99)),
      formatMs(cpu.at(-1)!),
      formatMs(Math.max(...r.addMs)),
      `${((100 * r.stable) / r.compared).toFixed(1)}%`,
    ];
  });
  report.table(
    [
      '',
      'compactions',
      "the model's summary, whole range",
      "the model's, the rest offline on top",
      'model calls (per compaction)',
      'request p50',
      'request p99',
      'request max',
      'CPU p99',
      'CPU max',
      'addMessage max',
      'views extending the previous',
    ],
    rows,
  );
  const [, two, , twenty] = results as [RunResult, RunResult, RunResult, RunResult];
  const stats = (r: RunResult) => {
    const sorted = r.ms.slice().sort((a, b) => a - b);
    const cpu = r.cpu.slice().sort((a, b) => a - b);
    const who = authors(r);
    return {
      p99: percentile(sorted, 0.99),
      max: sorted.at(-1)!,
      cpuP99: percentile(cpu, 0.99),
      cpuMax: cpu.at(-1)!,
      whole: who.whole / Math.max(1, who.summarized),
      share: (who.whole + who.part) / Math.max(1, who.summarized),
      stability: r.stable / r.compared,
    };
  };
  const a = stats(two);
  const b = stats(twenty);
  const outcomes = (r: RunResult) => {
    const counts = new Map<string, number>();
    for (const c of r.compactions) {
      const key = c.prepared ?? 'no summary';
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([k, n]) => `${k} ${n}`).join(', ');
  };
  // The slowest requests: whether their compaction was prepared (a plan made ahead taken as it was).
  const slowest = (r: RunResult) =>
    r.cpu
      .map((ms, i) => ({ ms, i }))
      .sort((x, y) => y.ms - x.ms)
      .slice(0, 5)
      .map(({ ms, i }) => {
        const receipt = r.receipts.get(i);
        const what = receipt
          ? `${receipt.reason} compaction, ${receipt.prepared ?? 'no summary'}${receipt.tokensBefore > receipt.budget ? `, from ${formatCount(receipt.tokensBefore)} tokens` : ''}`
          : 'no compaction';
        return `${formatMs(ms)} (${what})`;
      })
      .join('; ');
  report.note(
    `Goals, prepared ahead: with a 2 s summarizer p99 under 5 ms (wall ${formatMs(a.p99)}, ${verdict(a.p99 < 5)}; CPU ${formatMs(a.cpuP99)}, ${verdict(a.cpuP99 < 5)}), max under 50 ms (wall ${formatMs(a.max)}, ${verdict(a.max < 50)}; CPU ${formatMs(a.cpuMax)}, ${verdict(a.cpuMax < 50)}), the model's summary in at least 90% of compactions (counting a summary the model wrote for the whole range or for its start with the rest offline on top: ${(100 * a.share).toFixed(0)}%, ${verdict(a.share >= 0.9)}; counting only whole ranges: ${(100 * a.whole).toFixed(0)}%, ${verdict(a.whole >= 0.9)}); with a 20 s summarizer no request over 50 ms (wall ${formatMs(b.max)}, ${verdict(b.max < 50)}; CPU ${formatMs(b.cpuMax)}, ${verdict(b.cpuMax < 50)}). On a loaded machine wall time is mostly waiting for a core: the CPU columns (the process's user and system time during the request) are what a request costs. The slowest requests by CPU at 2 s: ${slowest(two)}; at 20 s: ${slowest(twenty)}.`,
  );
  report.note(
    `Stability: views extending the previous one byte for byte (stability on replay, compactions counted as breaks): ${(100 * a.stability).toFixed(1)}% and ${(100 * b.stability).toFixed(1)}%, at least 97%: ${verdict(Math.min(a.stability, b.stability) >= 0.97)}.`,
  );
  report.note(
    `What is counted: the compactions that summarized messages (a receipt with \`summary\`; the others only dropped, cleared or cut, keeping the summary in the view), by who wrote the summary they put in the view (\`summary.tools\`): the model, for the whole range it stands for (\`openai\`); the model for what was prepared, with the messages the range gained since it was asked (a turn that leapt past the trigger; at 20 s, also the call for what the range gained by the preparation level, not back at the trigger) summarized by the offline tools on top of it (\`openai+offline\`, \`prepared: 'partial'\`); or the offline tools alone (the rest). What the receipts say of the prepared summary (\`prepared\`): at 2 s ${outcomes(two)}; at 20 s ${outcomes(twenty)}. A compaction whose summary is not wholly the model's asks the model then for what it did not cover, off the request path, and the next compaction builds on that, so the model's summary counts from there. Model calls count every call of the fake summarizer (the preparation, the rest of a range that grew, the late ones). Session: \`longSessionMessages\` (openai, seed ${SEED}) up to its ${formatCount(REQUESTS)}th assistant message, a request before each, model ${MODEL}, default trigger, target and preparation level. The summarizer is a fake Chat Completions \`fetch\` on a virtual clock: the agent's own model call takes ${AGENT_CALL_MS / 1000} s between requests; a request waiting on the summarizer counts that wait. "addMessage max" is where the preparation's planning lands when the next message comes right after a request.`,
  );
}
