import { describe, expect, it } from 'vitest';
import { ConfigurationError } from './errors.js';
import { type Coordinator, mount, optionsFromConfig } from './mount.js';

describe('mount', () => {
  it('follows contract v2.1: mounts at "session" under the name "context"', async () => {
    const calls: unknown[][] = [];
    const coordinator: Coordinator = {
      mount(mountPoint: string, module: unknown, options?: { name?: string }) {
        calls.push([mountPoint, module, options]);
      },
    };
    const manager = await mount(coordinator, { max_tokens: 5000 });
    expect(calls).toEqual([['session', manager, { name: 'context' }]]);
    expect(manager.options.maxTokens).toBe(5000);
  });

  it('still mounts on a coordinator that only has the old two-parameter form', async () => {
    const calls: unknown[][] = [];
    const manager = await mount({ mount: (name: string, module: unknown) => calls.push([name, module]) });
    expect(calls).toEqual([['context', manager]]);
  });

  it('takes the contract from the caller where the coordinator hides its parameters', async () => {
    const calls: unknown[][] = [];
    const coordinator = { mount: (...args: unknown[]) => calls.push(args) };
    const manager = await mount(coordinator, {}, { contract: '2.1' });
    expect(calls).toEqual([['session', manager, { name: 'context' }]]);
    await expect(mount(coordinator, {}, { contract: '3' as '2.1' })).rejects.toThrow(/contract/);
    await expect(mount({} as Coordinator)).rejects.toThrow(ConfigurationError);
  });
});

describe('optionsFromConfig: the seeds’ snake_case names', () => {
  it('reads every one of them', () => {
    expect(
      optionsFromConfig({
        max_tokens: 1000,
        compaction_threshold: 0.8,
        target_usage: 0.5,
        preserve_system: false,
        keep_tool_results: 2,
        safety_margin: 10,
        conversation_id: 'c',
        auto_compact: false,
        recent_count: 3,
        exact_count_at: 0.8,
        max_compact_retries: 1,
        critical_floor: 0.9,
        compaction_notice: true,
        warn_at: 0.7,
        decline_at: 0.99,
        jump_escalation: 0.2,
        compaction_strategy: 'simple',
        export_on_compact: true,
        storage_path: '.ctx',
      }),
    ).toEqual({
      maxTokens: 1000,
      compactThreshold: 0.8,
      targetUsage: 0.5,
      preserveSystem: false,
      keepToolResults: 2,
      safetyMargin: 10,
      conversationId: 'c',
      autoCompact: false,
      recentCount: 3,
      exactCountAt: 0.8,
      maxCompactRetries: 1,
      criticalFloor: 0.9,
      compactionNotice: true,
      guard: { warnAt: 0.7, declineAt: 0.99, jumpEscalation: 0.2 },
      strategy: 'truncate',
      store: 'file:.ctx',
    });
    expect(optionsFromConfig({ compact_threshold: 0.85 })).toEqual({ compactThreshold: 0.85 });
    expect(optionsFromConfig({ persistence: { store: 'memory:' } })).toEqual({ store: 'memory:' });
  });

  it('refuses, with a message, what it cannot read; never drops it', () => {
    expect(() => optionsFromConfig({ keep_recent: 10 } as never)).toThrow(
      /keep_recent: is not an option; the seeds' names read here are max_tokens/,
    );
    expect(() => optionsFromConfig({ compaction_strategy: 'custom' })).toThrow(
      /a custom strategy is a function/,
    );
    expect(() => optionsFromConfig({ compaction_strategy: 'bogus' })).toThrow(ConfigurationError);
    expect(() => optionsFromConfig({ compact_threshold: 0.8, compactThreshold: 0.9 })).toThrow(/conflicts/);
    expect(() => optionsFromConfig({ storage_path: 'a', store: 'memory:' })).toThrow(
      /one of store, storage_path/,
    );
    expect(() => optionsFromConfig({ persistence: { path: 'x' } } as never)).toThrow(/persistence\.path/);
  });
});

describe("the reference modules' own keys (issue 23, item 6)", () => {
  const coordinator = { mount: (_p: string, _m: unknown, _o?: { name?: string }) => undefined };

  it('maps protected_tool_results and compaction_notice_enabled to the options of the same meaning', async () => {
    const manager = await mount(coordinator, { protected_tool_results: 5, compaction_notice_enabled: true });
    expect(manager.options.keepToolResults).toBe(5);
    expect(optionsFromConfig({ compaction_notice_enabled: true })).toEqual({ compactionNotice: true });
  });

  it('accepts the keys it has no option for, with a warning naming the nearest option', async () => {
    const manager = await mount(coordinator, {
      protected_recent: 4,
      truncate_chars: 2000,
      memory_files: ['./AGENTS.md'],
      transcript_path: './t.jsonl',
    });
    const warnings: Array<{ code: string; message: string }> = [];
    manager.on('context:warn', (w) => warnings.push(w));
    expect(warnings.map((w) => w.code)).toEqual(Array(4).fill('config_not_applied'));
    expect(warnings.map((w) => w.message.split(':')[0])).toEqual([
      'protected_recent is not applied',
      'truncate_chars is not applied',
      'memory_files is not applied',
      'transcript_path is not applied',
    ]);
    expect(warnings[0]!.message).toMatch(/nearest options are targetUsage/);
    expect(warnings[2]!.message).toMatch(/pinned: true/);
    expect(warnings[3]!.message).toMatch(/nearest option is store/);
  });

  it("takes every key of the reference modules' configs, as they ship them (issue 34, item 5)", async () => {
    // context-simple's mount() with every key at its default, and context-persistent's own key.
    const simple = {
      max_tokens: 200_000,
      compact_threshold: 0.92,
      target_usage: 0.5,
      protected_recent: 0.3,
      protected_tool_results: 5,
      truncate_chars: 250,
      compaction_notice_enabled: true,
      compaction_notice_token_reserve: 800,
      compaction_notice_verbosity: 'normal',
      compaction_notice_min_level: 1,
      output_reserve_fraction: 0.5,
      max_tool_result_bytes: 131_072,
      token_meter: 'estimate',
    };
    const manager = await mount(coordinator, simple);
    const warnings: Array<{ code: string; message: string }> = [];
    manager.on('context:warn', (w) => warnings.push(w));
    expect(manager.options.keepToolResults).toBe(5);
    expect(optionsFromConfig(simple).compactionNotice).toBe(true);
    expect(warnings.map((w) => w.message.split(':')[0])).toEqual([
      'protected_recent is not applied',
      'truncate_chars is not applied',
      'compaction_notice_token_reserve is not applied',
      'compaction_notice_verbosity is not applied',
      'compaction_notice_min_level is not applied',
      'output_reserve_fraction is not applied',
      'max_tool_result_bytes is not applied',
      'token_meter is not applied',
    ]);
    const persistent = await mount(coordinator, { truncate_boundary: 10, memory_files: [] });
    const more: string[] = [];
    persistent.on('context:warn', (w) => more.push(w.message));
    expect(more.some((m) => m.startsWith('truncate_boundary is not applied'))).toBe(true);
  });
});
