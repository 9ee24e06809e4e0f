import * as z from 'zod/mini';
import { AMBIENT_ANNOTATIONS, SIDECAR_ANNOTATIONS } from './annotation-grammar.js';

/**
 * Who may take traffic out of the mesh (docs/cni.md, "Bypass policy"): the node's plugin config names the
 * annotations that narrow capture which pods may not carry, except in the namespaces it allows. The names come
 * from the one annotation grammar table; the CNI door, the installer, `meshcap lint --bypass-policy` and the node
 * agent all use this schema and `judgeBypass`. Pure.
 */

/** The annotations that narrow capture, in the table's order (sidecar, then ambient): what `"*"` denies. */
export const NARROWING_ANNOTATIONS: readonly string[] = [...new Set([...SIDECAR_ANNOTATIONS, ...AMBIENT_ANNOTATIONS].filter((g) => g.narrows).map((g) => g.name))];

const MAX_DENY = 64;
const MAX_NAMESPACES = 1024;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const denyEntry = z.string().check(
  z.refine((s) => s === '*' || NARROWING_ANNOTATIONS.includes(s), {
    message: `must be "*" or an annotation that narrows capture: ${NARROWING_ANNOTATIONS.join(', ')}`,
  }),
);
const namespace = z.string().check(z.regex(NAMESPACE, 'must be a Kubernetes namespace name (lowercase letters, digits and "-", at most 63)'));

export const bypassPolicySchema = z.strictObject({
  deny: z.array(denyEntry).check(z.minLength(1, 'must name at least one annotation (or "*")'), z.maxLength(MAX_DENY, `at most ${MAX_DENY} entries`)),
  allow_namespaces: z._default(z.array(namespace).check(z.maxLength(MAX_NAMESPACES, `at most ${MAX_NAMESPACES} namespaces`)), []),
});
export type BypassPolicy = z.output<typeof bypassPolicySchema>;

/** The annotations a policy denies, `"*"` expanded. */
export function listDenied(policy: BypassPolicy): readonly string[] {
  return policy.deny.includes('*') ? NARROWING_ANNOTATIONS : NARROWING_ANNOTATIONS.filter((a) => policy.deny.includes(a));
}

export type BypassVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly annotation: string; readonly value: string; readonly reason: string };

/**
 * Whether a pod in `namespace` may carry its annotations: the first denied annotation it carries (any value)
 * outside `allow_namespaces` is a violation. An absent policy allows everything.
 */
export function judgeBypass(policy: BypassPolicy | undefined, annotations: Readonly<Record<string, string>>, namespace: string): BypassVerdict {
  if (policy === undefined || policy.allow_namespaces.includes(namespace)) return { allowed: true };
  for (const annotation of listDenied(policy)) {
    const value = annotations[annotation];
    if (value === undefined) continue;
    const where = namespace === '' ? 'a container outside Kubernetes' : `namespace ${JSON.stringify(namespace)}`;
    const allowed = policy.allow_namespaces.length === 0 ? 'no namespace is allowed' : `allowed: ${policy.allow_namespaces.join(', ')}`;
    return { allowed: false, annotation, value, reason: `bypass_policy denies annotation ${annotation}=${JSON.stringify(value)} in ${where} (${allowed})` };
  }
  return { allowed: true };
}

/** Parses a policy given as JSON text (lint's `--bypass-policy`): the reason names the field, as the plugin does. */
export function parseBypassPolicy(text: string): { ok: true; value: BypassPolicy } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
  const r = bypassPolicySchema.safeParse(json);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0];
  const field = ['bypass_policy', ...(issue?.path ?? [])].join('.');
  const keys = issue?.code === 'unrecognized_keys' ? `unknown field ${JSON.stringify(issue.keys[0])}` : (issue?.message ?? 'invalid');
  return { ok: false, reason: `${field}: ${keys}` };
}
