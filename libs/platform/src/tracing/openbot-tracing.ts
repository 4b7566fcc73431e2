import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { noSpan, type EngineTracing, type PhaseSpanStart, type TraceSpan } from '@openbot/engine';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVICE_INSTANCE_ID } from '@opentelemetry/semantic-conventions';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { OtelTraceSpan } from './otel-trace-span';

/** An HTTP request's span, opened when the request arrives and ended with its answer. */
export interface HttpSpan {
  end(statusCode: number): void;
}

const noHttpSpan: HttpSpan = { end: () => undefined };

/**
 * The node's traces (docs/decisions/040-traces.md): OpenTelemetry's Node SDK with the OTLP/HTTP
 * exporter (JSON bodies), started with the app when an OTLP endpoint is configured and flushed and
 * shut down with it. Off, `enabled` is false and every call returns a no-op span at once; the
 * engine keeps its no-op port and the HTTP hook is not even added.
 *
 * Spans: one per HTTP request (named by the route pattern, never the raw path), one per phase run
 * (its trace is the execution's: the trace ID is the execution ID, so every phase of it, on any
 * node and after any takeover, lands in one trace), one per attempt of an outside call, a child of
 * its phase. Attributes are IDs, names, counts and fixed words: never prompt text, a secret or a
 * sealed value.
 */
@Injectable()
export class OpenbotTracing implements EngineTracing, OnApplicationShutdown {
  readonly enabled: boolean;
  private readonly sdk: NodeSDK | null = null;
  private readonly tracer: Tracer | null = null;
  private readonly instanceId: string;

  constructor(@Inject(RUNTIME_CONFIG) config: RuntimeConfig) {
    const traces = config.traces;
    this.instanceId = config.nodeId;
    this.enabled = traces !== null;
    if (traces === null) return;
    this.sdk = new NodeSDK({
      serviceName: traces.serviceName,
      // Only what the node says of itself: no host or process detection (no command lines in resources).
      autoDetectResources: false,
      traceExporter: new OTLPTraceExporter({ url: traces.url }),
      instrumentations: [],
      // Metrics are prom-client's (decision 034) and logs pino's: the SDK brings neither.
      metricReaders: [],
      logRecordProcessors: [],
    });
    this.sdk.start();
    this.tracer = trace.getTracer('openbot');
  }

  startPhase(phase: PhaseSpanStart): TraceSpan {
    const tracer = this.tracer;
    if (tracer === null) return noSpan;
    const span = tracer.startSpan(
      `${phase.workflow} ${phase.phase}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          'openbot.execution.id': phase.executionId,
          'openbot.execution.generation': phase.generation,
          'openbot.workflow': phase.workflow,
          'openbot.phase': phase.phase,
          'openbot.step': phase.step,
          [ATTR_SERVICE_INSTANCE_ID]: this.instanceId,
        },
      },
      executionContext(phase.executionId),
    );
    return new OtelTraceSpan(tracer, span);
  }

  /** Opens the span of an HTTP request; `route` is the route pattern (`/v1/chats/:id`), `unmatched` without one. */
  httpRequest(method: string, route: string, headers: Record<string, string | string[] | undefined>): HttpSpan {
    const tracer = this.tracer;
    if (tracer === null) return noHttpSpan;
    // A caller's W3C traceparent makes the request a child of its trace.
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const span = tracer.startSpan(
      `${method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_HTTP_ROUTE]: route } },
      parent,
    );
    return { end: (statusCode) => endHttp(span, statusCode) };
  }

  /** Sends the spans still batched now (tests and shutdown; the batch otherwise goes every few seconds). */
  async flush(): Promise<void> {
    if (this.sdk === null) return;
    const provider = trace.getTracerProvider() as { getDelegate?: () => unknown };
    const delegate = (provider.getDelegate?.() ?? provider) as { forceFlush?: () => Promise<void> };
    await delegate.forceFlush?.();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.sdk === null) return;
    // Flushes the spans still batched, then frees the global API for another app in this process (tests).
    await this.sdk.shutdown().catch(() => undefined);
    trace.disable();
    context.disable();
    propagation.disable();
  }
}

function endHttp(span: Span, statusCode: number): void {
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
  if (statusCode >= 500) {
    span.setAttribute('error.type', String(statusCode));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * The execution's own trace: a parent that is never exported, whose trace ID is the execution ID
 * (a UUID is 128 bits, as a trace ID). Every phase span of the execution is its child, on whatever
 * node and generation, so the spans of one execution link across takeovers by construction.
 */
export function executionContext(executionId: string): Context {
  const traceId = executionId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(traceId) || /^0+$/.test(traceId)) return ROOT_CONTEXT;
  const spanId = /^0+$/.test(traceId.slice(16)) ? '0000000000000001' : traceId.slice(16);
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}
