import { Annotation, Label } from '../../config/annotations.js';
import { annotationsRead, findGrammar } from '../../config/annotation-grammar.js';
import { judgeBypass } from '../../config/bypass-policy.js';
import { describeCode } from '../codes.js';
import type { Finding } from '../findings.js';
import { checkAnnotationValue, checkOutboundPorts } from './annotation-values.js';
import { locate } from './container-rules.js';
import type { PodContext } from './context.js';
import { isIstioKey, isKnownIstioAnnotation, isPodAnnotation } from './known-annotations.js';

/** Findings about labels and annotations: place, spelling, values and what they switch off (MCL006–013, MCL020, MCL021). */

const short = (key: string) => key.slice(key.indexOf('/') + 1);

function checkPlacement(ctx: PodContext): Finding[] {
  const w = ctx.workload;
  if (w.kind === 'Pod') return [];
  const keys = [...Object.keys(w.meta.annotations).filter(isPodAnnotation), ...(w.meta.labels[Label.inject] !== undefined ? [Label.inject] : [])];
  return keys.map((key) => locate(ctx, describeCode('MCL006', { key, kind: w.kind, templatePath: w.templatePath })));
}

function checkSpelling(ctx: PodContext): Finding[] {
  const w = ctx.workload;
  const keys = new Set([...Object.keys(w.template.annotations), ...(w.kind === 'Pod' ? [] : Object.keys(w.meta.annotations))]);
  return [...keys].filter((k) => isIstioKey(k) && !isKnownIstioAnnotation(k)).map((key) => locate(ctx, describeCode('MCL007', { key })));
}

function checkValues(ctx: PodContext): Finding[] {
  const out: Finding[] = [];
  // meshcap's verdict in the mode the pod is read in: the ambient node side reads other annotations, other ways.
  const mode = ctx.ambient ? 'ambient' : 'sidecar';
  const read = new Set(annotationsRead(mode, ctx.annotations).map((g) => g.name));
  for (const [key, value] of Object.entries(ctx.annotations)) {
    const readByMeshcap = read.has(key) || (findGrammar('sidecar', key) === undefined && findGrammar('ambient', key) === undefined);
    const problem = checkAnnotationValue(key, value, ctx.options.cni, readByMeshcap, mode);
    if (problem !== undefined) out.push(locate(ctx, describeCode('MCL008', problem)));
  }
  const outboundPorts = ctx.annotations[Annotation.includeOutboundPorts];
  if (outboundPorts !== undefined && checkOutboundPorts(outboundPorts) !== undefined) out.push(locate(ctx, describeCode('MCL009', { value: outboundPorts })));
  return out;
}

function checkInject(ctx: PodContext): Finding[] {
  const out: Finding[] = [];
  const label = ctx.workload.template.labels[Label.inject];
  const ann = ctx.annotations[Annotation.inject];
  for (const v of [label, ann]) {
    if (v !== undefined && v !== 'true' && v !== 'false') out.push(locate(ctx, describeCode('MCL013', { value: v })));
  }
  if (label !== undefined && ann !== undefined && label !== ann && out.length === 0) out.push(locate(ctx, describeCode('MCL013', { label, annotation: ann })));
  return out;
}

const ALL_V4 = '0.0.0.0/0';
const ALL_V6 = '::/0';

/** What the pod's (valid) traffic annotations switch off or leave out (MCL010–012). */
function checkCoverage(ctx: PodContext): Finding[] {
  const out: Finding[] = [];
  /** A valid value as the plugin reads it (" 3306 " is 3306; a blank excludeInboundPorts is none). */
  const valid = (key: string) => {
    const v = ctx.annotations[key];
    if (v === undefined || checkAnnotationValue(key, v, ctx.options.cni) !== undefined) return undefined;
    const read = findGrammar('sidecar', key)?.read(v);
    return read?.ok ? read.value : v;
  };
  const include = valid(Annotation.includeInboundPorts);
  const excludeIn = valid(Annotation.excludeInboundPorts);
  const excludeOut = valid(Annotation.excludeOutboundPorts);
  const excludeCidrs = valid(Annotation.excludeOutboundIPRanges);
  const ignoredExclude = excludeIn !== undefined && excludeIn !== '' && include !== undefined && include !== '*';
  if (ignoredExclude) out.push(locate(ctx, describeCode('MCL010')));
  const disables = (key: string, value: string, direction: string) => out.push(locate(ctx, describeCode('MCL011', { key: short(key), value: JSON.stringify(value), direction })));
  if (include === '') disables(Annotation.includeInboundPorts, include, 'inbound');
  if (valid(Annotation.includeOutboundIPRanges) === '') disables(Annotation.includeOutboundIPRanges, '', 'outbound');
  const allOut = excludeCidrs?.split(',').some((c) => c === ALL_V4 || c === ALL_V6) ?? false;
  if (excludeCidrs !== undefined && allOut) disables(Annotation.excludeOutboundIPRanges, excludeCidrs, 'outbound');
  if (ctx.interceptionMode === 'NONE') disables(Annotation.interceptionMode, 'NONE', 'inbound and outbound');
  const bypass = (list: string) => out.push(locate(ctx, describeCode('MCL012', { list })));
  if (excludeIn !== undefined && excludeIn !== '' && !ignoredExclude) bypass(`inbound ports ${excludeIn}`);
  if (excludeOut !== undefined && excludeOut !== '') bypass(`outbound ports ${excludeOut}`);
  if (excludeCidrs !== undefined && excludeCidrs !== '' && !allOut) bypass(`outbound CIDRs ${excludeCidrs}`);
  return out;
}

function checkEnrolment(ctx: PodContext, restricted: boolean): Finding[] {
  const out: Finding[] = [];
  if (ctx.ambient && !ctx.pod.hostNetwork && (ctx.inject === 'true' || ctx.pod.containers.some((c) => c.proxy))) out.push(locate(ctx, describeCode('MCL021')));
  if (restricted && ctx.sidecar && !ctx.options.cni && ctx.interceptionMode !== 'NONE') out.push(locate(ctx, describeCode('MCL020')));
  return out;
}

/** A denied annotation outside the policy's namespaces (MCL022); a workload without a namespace is in "default". */
function checkBypass(ctx: PodContext): Finding[] {
  const policy = ctx.options.bypassPolicy;
  if (policy === undefined) return [];
  const namespace = ctx.workload.namespace ?? 'default';
  const v = judgeBypass(policy, ctx.annotations, namespace);
  return v.allowed ? [] : [locate(ctx, describeCode('MCL022', { annotation: v.annotation, value: v.value, namespace }))];
}

/** Findings about a workload's labels and annotations. */
export function checkMetadata(ctx: PodContext, restrictedNamespace: boolean): Finding[] {
  const out = [...checkPlacement(ctx), ...checkSpelling(ctx), ...checkValues(ctx), ...checkInject(ctx), ...checkBypass(ctx)];
  if (ctx.sidecar) out.push(...checkCoverage(ctx));
  out.push(...checkEnrolment(ctx, restrictedNamespace));
  return out;
}
