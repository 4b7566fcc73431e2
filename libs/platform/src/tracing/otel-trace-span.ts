import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { CallSpanStart, SpanAttributes, TraceSpan } from '@openbot/engine';

/**
 * The engine's span (libs/engine/src/base/tracing.ts) on an OpenTelemetry span. Parents are passed
 * explicitly, never through the active context: a call's span is a child of its phase's span
 * whatever async path the sender takes.
 */
export class OtelTraceSpan implements TraceSpan {
  constructor(
    private readonly tracer: Tracer,
    readonly span: Span,
  ) {}

  startCall(call: CallSpanStart): TraceSpan {
    const child = this.tracer.startSpan(
      `call ${call.kind}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'openbot.execution.id': call.executionId,
          'openbot.call.key': call.callKey,
          'openbot.call.kind': call.kind,
          'openbot.call.attempt': call.attempt,
          'openbot.call.safe': call.safe,
        },
      },
      trace.setSpan(ROOT_CONTEXT, this.span),
    );
    return new OtelTraceSpan(this.tracer, child);
  }

  set(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes);
  }

  rename(name: string): void {
    this.span.updateName(name);
  }

  end(outcome?: { readonly error?: string }): void {
    if (outcome?.error !== undefined) {
      this.span.setAttribute('error.type', outcome.error);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
    }
    this.span.end();
  }
}
