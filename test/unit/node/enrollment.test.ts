import { describe, expect, it } from 'vitest';
import { decideEnrollment, type EnrollmentInput } from '../../../src/node/enrollment.js';
import { ConfigError } from '../../../src/errors.js';

const status = (initContainers: string[] | null, containers: string[] | null) => JSON.stringify({ initContainers, containers, volumes: ['istio-envoy'], imagePullSecrets: null, revision: 'default' });
const CLASSIC = status(['istio-init'], ['istio-proxy']);
const FOR_CNI = status(['istio-validation'], ['istio-proxy']);
const NATIVE = status(['istio-validation', 'istio-proxy'], null);
const NATIVE_INIT = status(['istio-init', 'istio-proxy'], null);

const pod = (annotations: EnrollmentInput['annotations'], extra: Partial<EnrollmentInput> = {}): EnrollmentInput => ({
  mode: 'sidecar',
  excludeNamespaces: ['kube-system'],
  namespace: 'default',
  podName: 'web',
  declaresCapability: true,
  annotations,
  ...extra,
});

describe('sidecar enrollment, first match wins', () => {
  it.each<[string, EnrollmentInput, boolean, string]>([
    ['a container without K8S_POD_* args is opted in by the network', pod(undefined, { namespace: '', podName: '' }), true, 'not a Kubernetes pod'],
    ['a pod in an excluded namespace is skipped without reading a broken status', pod({ 'sidecar.istio.io/status': '{' }, { namespace: 'kube-system' }), false, 'namespace kube-system is excluded'],
    ['a runtime that passes no annotations leaves the pod alone', pod(undefined), false, 'the runtime passed no pod annotations'],
    ['an entry without the capability leaves the pod alone', pod(undefined, { declaresCapability: false }), false, 'does not declare the io.kubernetes.cri.pod-annotations capability'],
    ['null annotations are no annotations: not injected', pod(null), false, 'no sidecar.istio.io/status annotation'],
    ['unrelated annotations are not injection', pod({ 'example.com/owner': 'team a' }), false, 'no sidecar.istio.io/status annotation'],
    ['istio-init in the status sets the rules itself', pod({ 'sidecar.istio.io/status': CLASSIC }), false, 'istio-init in sidecar.istio.io/status'],
    ['istio-init among native sidecars too', pod({ 'sidecar.istio.io/status': NATIVE_INIT }), false, 'istio-init'],
    ['a status without istio-proxy is not a sidecar pod', pod({ 'sidecar.istio.io/status': status([], ['app']) }), false, 'no istio-proxy in sidecar.istio.io/status'],
    ['a gateway template is not captured', pod({ 'sidecar.istio.io/status': FOR_CNI, 'inject.istio.io/templates': 'sidecar, gateway' }), false, 'names gateway'],
    ['a grpc-agent template is not captured', pod({ 'sidecar.istio.io/status': FOR_CNI, 'inject.istio.io/templates': 'grpc-agent' }), false, 'names grpc-agent'],
    ['inject "False" (Go ParseBool) opts out', pod({ 'sidecar.istio.io/status': FOR_CNI, 'sidecar.istio.io/inject': 'False' }), false, 'sidecar.istio.io/inject is "False"'],
    ['inject "0" opts out', pod({ 'sidecar.istio.io/status': FOR_CNI, 'sidecar.istio.io/inject': '0' }), false, 'is "0"'],
    ['an injected pod (istio-cni form) is captured', pod({ 'sidecar.istio.io/status': FOR_CNI }), true, 'istio-proxy in sidecar.istio.io/status'],
    ['a native sidecar (istio-proxy in initContainers) is captured', pod({ 'sidecar.istio.io/status': NATIVE }), true, 'istio-proxy'],
  ])('%s', (_name, input, enrolled, reason) => {
    const d = decideEnrollment(input);
    expect(d.enrolled).toBe(enrolled);
    expect(d.reason).toContain(reason);
  });

  it('ignores inject "yes" with a warning and captures the injected pod', () => {
    const d = decideEnrollment(pod({ 'sidecar.istio.io/status': FOR_CNI, 'sidecar.istio.io/inject': 'yes' }));
    expect(d.enrolled).toBe(true);
    expect(d.warnings).toEqual(['ignored sidecar.istio.io/inject="yes": not a boolean (as istio-cni does)']);
  });

  it('warns when the runtime passes no annotations', () => {
    expect(decideEnrollment(pod(undefined)).warnings[0]).toContain('pod passes through untouched');
  });

  it.each([['not JSON', '{"containers":'], ['a JSON list', '["istio-proxy"]'], ['a number for containers', '{"containers":7}'], ['a JSON string', '"istio-proxy"']])(
    'refuses a status annotation that is %s, naming it',
    (_name, value) => {
      const run = () => decideEnrollment(pod({ 'sidecar.istio.io/status': value }));
      expect(run).toThrow(ConfigError);
      expect(run).toThrow(/invalid annotation sidecar\.istio\.io\/status=/);
    },
  );
});

describe('ambient enrollment', () => {
  const amb = (annotations: EnrollmentInput['annotations'], extra: Partial<EnrollmentInput> = {}) => pod(annotations, { mode: 'ambient', ...extra });

  it.each<[string, EnrollmentInput, boolean]>([
    ['a pod with no annotations is enrolled by the network', amb(null), true],
    ['a pod whose runtime passes no annotations is enrolled by the network', amb(undefined), true],
    ['redirection "enabled" (written by Istio) is accepted', amb({ 'ambient.istio.io/redirection': 'enabled' }), true],
    ['redirection "pending" (written by Istio) is accepted', amb({ 'ambient.istio.io/redirection': 'pending' }), true],
    ['redirection "disabled" opts out', amb({ 'ambient.istio.io/redirection': 'disabled' }), false],
    ['a sidecar pod is left to its sidecar', amb({ 'sidecar.istio.io/status': FOR_CNI }), false],
    ['a broken status annotation still only means "has a sidecar"', amb({ 'sidecar.istio.io/status': '{' }), false],
    ['an excluded namespace is skipped', amb(null, { namespace: 'kube-system' }), false],
  ])('%s', (_name, input, enrolled) => {
    expect(decideEnrollment(input).enrolled).toBe(enrolled);
  });

  it('ignores an unknown redirection value with a warning', () => {
    const d = decideEnrollment(amb({ 'ambient.istio.io/redirection': 'maybe' }));
    expect(d.enrolled).toBe(true);
    expect(d.warnings[0]).toContain('ambient.istio.io/redirection="maybe"');
  });
});
