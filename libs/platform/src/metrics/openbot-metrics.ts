import { Inject, Injectable } from '@nestjs/common';
import type { EngineMetrics, PhaseMetricOutcome, TakeoverCause } from '@openbot/engine';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';

/** Seconds: from a fast HTTP answer or token to a long phase. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const PHASE_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64];

/** The label value of a model past `OPENBOT_METRICS_MODEL_LABELS`, or of a name that is no plausible model name. */
export const OTHER_MODEL = 'other';
/** A model name as providers spell them (`gpt-4o-mini`, `claude-3-5-sonnet@20240620`, `org/model:tag`), at most 100 characters. */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,99}$/;

/** What the HTTP layer reports of one answered request; `route` is the route pattern, never the raw path. */
export interface HttpRequestMetric {
  readonly method: string;
  readonly route: string;
  readonly statusCode: number;
  readonly seconds: number;
}

/** What one model call's successful attempt reports (labels: the provider's kind and the model name, never an ID). */
export interface ModelCallMetric {
  readonly providerKind: string;
  readonly model: string;
  readonly firstTokenSeconds: number | null;
  readonly totalSeconds: number;
}

/**
 * The node's metrics (docs/decisions/034-metrics.md): one prom-client registry per app (two apps
 * in one process, as in tests, never share or clash), and the recording side every layer calls.
 * With `OPENBOT_METRICS_PORT` unset, `enabled` is false: nothing is registered or recorded and
 * every call returns at once. Label values are route patterns, workflow names, provider kinds,
 * model names (bounded: OPENBOT_METRICS_MODEL_LABELS) and fixed words: never an ID, a key or prompt text.
 */
@Injectable()
export class OpenbotMetrics implements EngineMetrics {
  readonly registry = new Registry();
  readonly enabled: boolean;
  private readonly http: Histogram<'method' | 'route' | 'status_class'>;
  private readonly sseOpen: Gauge;
  private readonly phases: Histogram<'workflow' | 'outcome'>;
  private readonly takeovers: Counter<'cause'>;
  private readonly eventBatches: Histogram;
  private readonly ended: Counter<'workflow' | 'state'>;
  private readonly firstToken: Histogram<'provider_kind' | 'model'>;
  private readonly modelTotal: Histogram<'provider_kind' | 'model'>;
  private readonly tokens: Counter<'provider_kind' | 'model' | 'direction'>;
  private readonly cost: Counter<'provider_kind' | 'model'>;
  /**
   * The model names that have a label value of their own on this node. Organizations choose model
   * names (their providers, their Bots): only the first `OPENBOT_METRICS_MODEL_LABELS` distinct
   * ones get one, every later one counts as `other` (docs/decisions/074), which bounds the series
   * one organization can make a scraper store.
   */
  private readonly modelLabels = new Set<string>();
  private readonly modelLabelLimit: number;

  constructor(@Inject(RUNTIME_CONFIG) config: RuntimeConfig) {
    this.enabled = config.metrics !== null;
    this.modelLabelLimit = config.metrics?.modelLabels ?? 0;
    const registers = this.enabled ? [this.registry] : [];
    this.http = new Histogram({
      name: 'openbot_http_request_duration_seconds',
      help: 'HTTP requests answered by the public API, by method, route pattern and status class.',
      labelNames: ['method', 'route', 'status_class'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.sseOpen = new Gauge({ name: 'openbot_sse_observers_open', help: 'Event streams (SSE) open on this node.', registers });
    this.phases = new Histogram({
      name: 'openbot_phase_duration_seconds',
      help: 'Phase runs of executions on this node, by workflow and how the run ended.',
      labelNames: ['workflow', 'outcome'],
      buckets: PHASE_BUCKETS,
      registers,
    });
    this.takeovers = new Counter({ name: 'openbot_takeovers_total', help: 'Executions this node took over from another, by cause.', labelNames: ['cause'], registers });
    this.eventBatches = new Histogram({
      name: 'openbot_event_write_batch_executions',
      help: 'Event-log write statements, by how many executions each carried.',
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.ended = new Counter({ name: 'openbot_executions_ended_total', help: 'Executions that reached a final state on this node, by workflow and state.', labelNames: ['workflow', 'state'], registers });
    this.firstToken = new Histogram({
      name: 'openbot_model_call_first_token_seconds',
      help: 'Model calls: time from the send to the first text, by provider kind and model.',
      labelNames: ['provider_kind', 'model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.modelTotal = new Histogram({
      name: 'openbot_model_call_duration_seconds',
      help: 'Model calls: time from the send to the whole answer, by provider kind and model.',
      labelNames: ['provider_kind', 'model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.tokens = new Counter({ name: 'openbot_model_tokens_total', help: 'Confirmed model tokens, by provider kind, model and direction (input, output).', labelNames: ['provider_kind', 'model', 'direction'], registers });
    this.cost = new Counter({ name: 'openbot_model_cost_micros_total', help: 'Confirmed model cost in micros of the price currency, by provider kind and model.', labelNames: ['provider_kind', 'model'], registers });
  }

  httpRequest(m: HttpRequestMetric): void {
    if (!this.enabled) return;
    this.http.observe({ method: m.method, route: m.route, status_class: `${Math.floor(m.statusCode / 100)}xx` }, m.seconds);
  }

  sseOpened(): void {
    if (this.enabled) this.sseOpen.inc();
  }

  sseClosed(): void {
    if (this.enabled) this.sseOpen.dec();
  }

  modelCall(m: ModelCallMetric): void {
    if (!this.enabled) return;
    const labels = { provider_kind: m.providerKind, model: this.modelLabel(m.model) };
    if (m.firstTokenSeconds !== null) this.firstToken.observe(labels, m.firstTokenSeconds);
    this.modelTotal.observe(labels, m.totalSeconds);
  }

  /** Usage of a call whose record was confirmed now (a duplicate result is not counted twice). */
  modelUsage(providerKind: string, modelName: string, usage: { inputTokens: number; outputTokens: number; costMicros: number }): void {
    if (!this.enabled) return;
    const model = this.modelLabel(modelName);
    this.tokens.inc({ provider_kind: providerKind, model, direction: 'input' }, usage.inputTokens);
    this.tokens.inc({ provider_kind: providerKind, model, direction: 'output' }, usage.outputTokens);
    this.cost.inc({ provider_kind: providerKind, model }, usage.costMicros);
  }

  /** The model's label value: its name while fewer than the limit's names have one, `other` after. */
  private modelLabel(model: string): string {
    if (this.modelLabels.has(model)) return model;
    if (!MODEL_NAME.test(model) || model === OTHER_MODEL || this.modelLabels.size >= this.modelLabelLimit) return OTHER_MODEL;
    this.modelLabels.add(model);
    return model;
  }

  // ---- EngineMetrics (libs/engine/src/base/metrics.ts) ----
  phaseEnded(workflow: string, outcome: PhaseMetricOutcome, seconds: number): void {
    if (this.enabled) this.phases.observe({ workflow, outcome }, seconds);
  }

  takeover(cause: TakeoverCause): void {
    if (this.enabled) this.takeovers.inc({ cause });
  }

  eventBatchWritten(executions: number): void {
    if (this.enabled) this.eventBatches.observe(executions);
  }

  executionEnded(workflow: string, state: string): void {
    if (this.enabled) this.ended.inc({ workflow, state });
  }
}
