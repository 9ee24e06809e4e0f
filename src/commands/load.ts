import type { Host } from '../config/host.js';
import type { Env } from '../config/sources.js';
import type { FlagValues } from '../config/sidecar.js';
import { describeIgnoredInputs, loadSidecarConfig } from '../config/sidecar.js';
import { loadAmbientConfig, loadAmbientHostConfig } from '../config/ambient.js';
import type { IstioLevel } from '../config/fields.js';
import { buildSidecarPlan } from '../model/sidecar/build.js';
import { buildAmbientPlan } from '../model/ambient/build.js';
import { buildAmbientHostPlan } from '../model/ambient/host.js';
import type { Plan } from '../model/plan.js';
import type { NftRenderOptions } from '../render/nft-transaction.js';
import { checkNftGroups, checkNftInterfaces } from '../config/nft.js';

/** The engine's commands, as every door names them. */
export type CommandName = 'sidecar' | 'ambient' | 'ambient-host';

/** What the generic driver needs from any command's config. */
export interface CommonSettings {
  readonly dryRun: boolean;
  readonly dryRunFormat: 'save' | 'istio';
  readonly cleanupOnly: boolean;
  readonly netns: string | undefined;
  readonly reconcile: boolean;
  readonly forceApply: boolean;
  readonly forceIptablesBinary: 'legacy' | 'nft' | undefined;
  readonly logFormat: 'json' | 'pretty';
  readonly logOutputLevel: IstioLevel;
  readonly ipv6Reason: string;
  /** Istio's sidecar framing ends with the final `*-save` dumps; ambient's does not. */
  readonly finalSaves: boolean;
  readonly notes: readonly string[];
}

export interface Loaded {
  readonly settings: CommonSettings;
  readonly plan: Plan;
  /** Sidecar-only extras (DRY_RUN_FILE_PATH, validation). */
  readonly sidecar?: ReturnType<typeof loadSidecarConfig>;
  /** Set with --native-nftables: the rules go into `inet` tables through one nft transaction. */
  readonly nft?: NftRenderOptions;
}

/** iptables-only switches that native mode accepts and does not need: every nft apply converges. */
function describeNftIgnored(cfg: { reconcile: boolean; forceApply: boolean; forceIptablesBinary: string | undefined }): string[] {
  const given = [cfg.reconcile && '--reconcile', cfg.forceApply && '--force-apply', cfg.forceIptablesBinary !== undefined && '--force-iptables-binary'].filter((x): x is string => typeof x === 'string');
  return given.length === 0 ? [] : [`${given.join(', ')} ha${given.length === 1 ? 's' : 've'} no effect with --native-nftables: every apply replaces our tables in one transaction`];
}

function checkSidecarNftInputs(cfg: ReturnType<typeof loadSidecarConfig>): void {
  checkNftInterfaces('--istio-exclude-interfaces', cfg.excludeInterfaces);
  checkNftInterfaces('--kube-virt-interfaces', cfg.kubeVirtInterfaces);
  checkNftGroups('env ISTIO_OUTBOUND_OWNER_GROUPS', cfg.ownerGroupsInclude);
  checkNftGroups('env ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', cfg.ownerGroupsExclude);
}

/** flags + env → validated config → plan, for each command. */
export function loadCommand(command: CommandName, flags: FlagValues, env: Env, host: Host): Loaded {
  switch (command) {
    case 'sidecar': {
      const cfg = loadSidecarConfig(flags, env, host);
      if (cfg.nativeNftables) checkSidecarNftInputs(cfg);
      const notes = [...describeIgnoredInputs(cfg), ...(cfg.nativeNftables ? describeNftIgnored(cfg) : [])];
      const loaded = { settings: { ...cfg, finalSaves: true, notes }, plan: buildSidecarPlan(cfg), sidecar: cfg };
      return cfg.nativeNftables ? { ...loaded, nft: { mode: 'sidecar' } } : loaded;
    }
    case 'ambient': {
      const cfg = loadAmbientConfig(flags, env, host);
      const settings = { ...cfg, forceApply: false, finalSaves: false, notes: [] };
      return { settings, plan: buildAmbientPlan(cfg), ...(cfg.nativeNftables ? { nft: { mode: 'ambient' as const } } : {}) };
    }
    case 'ambient-host': {
      const cfg = loadAmbientHostConfig(flags, env, host);
      // The node-side chain is ours alone (exact ownership), so every apply converges, as Istio's agent
      // deletes and re-creates its host rules at every start.
      const settings = { ...cfg, reconcile: true, forceApply: false, finalSaves: false, notes: [] };
      return { settings, plan: buildAmbientHostPlan(cfg), ...(cfg.nativeNftables ? { nft: { mode: 'ambient-host' as const, kubeletUid: cfg.kubeletUid } } : {}) };
    }
  }
}
