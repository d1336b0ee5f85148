/**
 * `npm run bench -- cost`: what a long agent session's input is billed, replayed through the
 * manager (`replayConversation`, metered by src/meter/cost-meter.ts), beside a sliding window at
 * the same budget and no compaction; and the cache-expiry policy (`compactWhenCacheExpired`) on
 * and off over a session with idle spells longer than the cache's TTL; and who compacts an OpenAI
 * agent session (bench/provider-compaction.ts).
 */
import { availableParallelism, loadavg } from 'node:os';
import { replayConversation } from '../src/report/replay.js';
import type { CostAlternative } from '../src/report/replay-cost.js';
import { longSessionMessages } from '../test/support/arbitraries.js';
import { serverCompactionSection } from './cost-server-compaction.js';
import { providerCompactionSection } from './provider-compaction.js';
import { formatMs, Report } from './report.js';
import { UsageError } from './usage-error.js';

const SEED = 20_240_601;
const BUDGET = 60_000;
const MODELS = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-4o' } as const;

function usd(n: number | undefined): string {
  return n === undefined ? '–' : `$${n.toFixed(2)}`;
}

function share(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '–';
}

/** What the policy's views kept, beside its price: a policy can look cheap by forgetting. */
function kept(a: CostAlternative): string[] {
  const k = a.kept;
  return [
    share(k.accepted, k.requests),
    share(k.taskInView, k.accepted),
    share(k.latestUserInView, k.accepted),
    share(k.factsKept, k.factsLeftOut),
    a.unusable ? `not ranked: ${a.unusable}` : 'yes',
  ];
}

const KEPT_HEADERS = [
  'views the provider takes',
  'task in view',
  'latest user turn in view',
  'facts kept of what left (last view)',
  'ranked',
];

function row(label: string, a: CostAlternative): string[] {
  const t = a.totals;
  return a.fits
    ? [
        label,
        String(t.requests),
        t.inputTokens.toLocaleString('en-US'),
        share(t.cachedTokens, t.inputTokens),
        usd(t.price),
        ...kept(a),
      ]
    : [label, '–', '–', '–', a.note, ...kept(a)];
}

/** Runs the cost benchmark and writes `bench/results/cost.md`. */
export async function runCostBenchmark(args: readonly string[]): Promise<void> {
  let n = 3000;
  let turns = 1000;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--messages' && Number.isInteger(Number(args[i + 1])) && Number(args[i + 1]) >= 100) {
      n = Number(args[++i]);
    } else if (args[i] === '--turns' && Number.isInteger(Number(args[i + 1])) && Number(args[i + 1]) >= 10) {
      turns = Number(args[++i]);
    } else
      throw new UsageError(
        `unknown option ${JSON.stringify(args[i])} (cost takes --messages N, N ≥ 100, and --turns T, T ≥ 10)`,
      );
  }
  const started = performance.now();
  const report = new Report('billed input of a long session');
  report.note(
    `Node ${process.version}, ${availableParallelism()} cores, load ${loadavg()[0]?.toFixed(2)} at start. ` +
      `Session: longSessionMessages(${n}, format, ${SEED}) replayed through a ContextManager at a ${BUDGET.toLocaleString('en-US')}-token ` +
      'budget, a model call before each assistant message. Prices and caching rules: src/tokens/pricing.ts (read 2026-11-24). ' +
      'Sliding window: system messages and the newest turns within the same budget, starting on a user turn (never on a user message that only returns tool results, which a provider refuses without its calls).',
  );
  for (const format of ['anthropic', 'openai'] as const) {
    const model = MODELS[format];
    const messages = longSessionMessages(n, format, SEED);
    const steady = await replayConversation(messages, { model, maxTokens: BUDGET });
    const [ours, window, whole] = steady.cost.alternatives;
    report.heading(`${model} (${format} session), one call every 30 s`);
    report.table(
      ['policy', 'requests', 'input tokens', 'read from cache', 'billed input', ...KEPT_HEADERS],
      [row('contextkit', ours!), row('sliding window', window!), row('no compaction', whole!)],
    );
    report.note(
      'Beside each price, what its views kept: the share the provider would take (valid, within the budget), the share of those holding the task (the first user turn) and the latest user turn, and of the ids, numbers, dates and paths said in what the last view left out, the share it still shows. A policy whose views are refused or drop the task or latest user turn on more than 5% of calls is not ranked.',
    );
    const ratio = (ours!.totals.price ?? 0) / (window!.totals.price ?? 1);
    report.note(
      `contextkit ÷ sliding window: ${ratio.toFixed(3)}× billed input; ${steady.totals.compactions} compactions.`,
    );

    // Every 25th call comes after 10 idle minutes: past the 5-minute TTL of both providers.
    const secondsBefore = (turn: number) => (turn % 25 === 0 ? 600 : 30);
    const on = await replayConversation(messages, { model, maxTokens: BUDGET, secondsBefore });
    const off = await replayConversation(messages, {
      model,
      maxTokens: BUDGET,
      secondsBefore,
      compactWhenCacheExpired: false,
    });
    const expired = on.compactions.filter((c) => c.receipt.reason === 'cache_expired').length;
    report.heading(`${model}: idle 10 minutes before every 25th call, compactWhenCacheExpired on and off`);
    report.table(
      [
        'compactWhenCacheExpired',
        'compactions',
        'of them at an expired cache',
        'read from cache',
        'billed input',
        'requests over budget',
      ],
      [
        [
          'on',
          String(on.totals.compactions),
          String(expired),
          share(on.cost.alternatives[0]!.totals.cachedTokens, on.cost.alternatives[0]!.totals.inputTokens),
          usd(on.cost.alternatives[0]!.totals.price),
          String(on.totals.overflows),
        ],
        [
          'off',
          String(off.totals.compactions),
          '0',
          share(off.cost.alternatives[0]!.totals.cachedTokens, off.cost.alternatives[0]!.totals.inputTokens),
          usd(off.cost.alternatives[0]!.totals.price),
          String(off.totals.overflows),
        ],
      ],
    );
  }
  await providerCompactionSection(report, turns);
  await serverCompactionSection(report, turns);
  report.note(`Whole run: ${formatMs(performance.now() - started)}.`);
  process.stdout.write(report.toText());
  const path = report.write('cost');
  process.stdout.write(`\nwritten to ${path}\n`);
}
