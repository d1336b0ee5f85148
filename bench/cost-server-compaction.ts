/**
 * The `cost` bench's section on Anthropic's server-side compaction, against the fake Messages API
 * of test/support (it compacts, bills `usage.iterations` and drops what precedes a compaction
 * block as the compaction page documents): one agent session of N turns run three ways: with
 * contextkit driving the server's compaction (`providerCompaction`, trigger from its budget),
 * with contextkit's own compaction, and with the provider's one-line switch at its default
 * trigger (the whole stored history sent each time).
 */
import { ContextManager } from '../src/manager.js';
import { drivenSession, MODEL, type SessionFigures } from '../test/support/driven-session.js';
import { startFakeAnthropic } from '../test/support/fake-anthropic-server.js';
import type { Report } from './report.js';

const BUDGET = 60_000;
/** The fake counts raw cl100k tokens: count the same so counts and bills compare. */
const EXACT = { [MODEL]: { tokenizer: { kind: 'exact', encoding: 'cl100k_base' } } } as const;

function pct(x: number): string {
  return `${(100 * x).toFixed(2)}%`;
}

/** Adds the section to `report`. */
export async function serverCompactionSection(report: Report, turns: number): Promise<void> {
  const server = await startFakeAnthropic();
  try {
    const run = (providerCompaction: boolean, mode: 'manager' | 'provider-default' = 'manager') =>
      drivenSession(
        server.url,
        turns,
        new ContextManager({
          model: MODEL,
          models: EXACT,
          ...(providerCompaction ? { providerCompaction } : {}),
        }),
        BUDGET,
        mode,
      );
    const driven = await run(true);
    const own = await run(false);
    const switchOnly = await run(false, 'provider-default');
    const cells = (label: string, f: SessionFigures, trigger: string): string[] => [
      label,
      trigger,
      String(f.serverCompactions + f.ownCompactions),
      f.billedInput.toLocaleString('en-US'),
      String(f.refused),
      `${f.stored}/${f.added}`,
    ];
    report.heading(`${MODEL}: server-side compaction over a ${turns}-turn agent session (fake Messages API)`);
    report.table(
      [
        'policy',
        'trigger',
        'compactions',
        'billed input (iterations summed)',
        'requests refused',
        'stored/added',
      ],
      [
        cells(
          'contextkit drives the server (providerCompaction)',
          driven,
          `${Math.floor(0.92 * BUDGET)} (budget ${BUDGET})`,
        ),
        cells("contextkit's own compaction", own, `${Math.floor(0.92 * BUDGET)} (budget ${BUDGET})`),
        cells("provider's switch alone, default trigger", switchOnly, '150,000 (API default)'),
      ],
    );
    report.note(
      `Driven run: worst |counted − server-reported input| on any request after the third: ${pct(driven.worstCountError)}; ` +
        `cost meter's input ${driven.meterInput.toLocaleString('en-US')} vs the server's billing ${driven.billedInput.toLocaleString('en-US')} ` +
        `(${pct(Math.abs(driven.meterInput - driven.billedInput) / driven.billedInput)}), compaction iterations included.`,
    );
  } finally {
    await server.close();
  }
}
