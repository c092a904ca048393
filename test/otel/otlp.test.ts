import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromJsonl } from '../../src/index.js';
import { summarize } from '../../operators/index.js';
import { traceRun } from '../../otel/index.js';
import { fixtureBytes } from '../support/collect.js';

/** An OTLP/HTTP receiver on a free loopback port: keeps what each POST carried. */
class Receiver {
  readonly requests: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  start(): Promise<string> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => {
        resolve(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`);
      }),
    );
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** An attribute value of the OTLP JSON encoding, as a plain value. */
function plain(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value['stringValue'];
  if ('intValue' in value) return Number(value['intValue']);
  if ('boolValue' in value) return value['boolValue'];
  return value;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  status: { code?: number; message?: string };
  attributes: { key: string; value: Record<string, unknown> }[];
}

describe('traceRun over OTLP/HTTP', () => {
  const receiver = new Receiver();
  let url: string;
  beforeAll(async () => (url = await receiver.start()));
  afterAll(() => receiver.stop());

  it('exports the span tree of a run to a collector, which receives it whole', async () => {
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
    });
    const summary = await lastValueFrom(
      fromJsonl(fixtureBytes('research-run.jsonl')).pipe(traceRun({ tracerProvider: provider }), summarize()),
    );
    // The flush resolves once the receiver has answered every export.
    await provider.forceFlush();
    await provider.shutdown();

    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request.path).toBe('/v1/traces');
      expect(request.headers['content-type']).toBe('application/json');
    }
    const scopes = receiver.requests.flatMap(
      (r) =>
        (JSON.parse(r.body) as { resourceSpans: { scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[] })
          .resourceSpans,
    );
    const scopeSpans = scopes.flatMap((r) => r.scopeSpans);
    expect(new Set(scopeSpans.map((s) => s.scope.name))).toEqual(new Set(['evosci-rx']));
    const spans = scopeSpans.flatMap((s) => s.spans);
    const attributes = (span: OtlpSpan) => Object.fromEntries(span.attributes.map((a) => [a.key, plain(a.value)]));

    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => s.name)).toEqual(['invoke_agent EvoScientist']);
    expect(attributes(roots[0]!)).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.usage.input_tokens': summary.usage.inputTokens,
      'gen_ai.usage.output_tokens': summary.usage.outputTokens,
      'evosci.run.outcome': 'completed',
    });
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const ids = new Set(spans.map((s) => s.spanId));
    for (const span of spans) if (span.parentSpanId) expect(ids).toContain(span.parentSpanId);

    const tools = spans.filter((s) => attributes(s)['gen_ai.operation.name'] === 'execute_tool');
    expect(tools.map((s) => s.name).sort()).toEqual(summary.invocations.map((i) => `execute_tool ${i.name}`).sort());
    // OTLP status code 2 is ERROR.
    expect(tools.filter((s) => s.status.code === 2)).toHaveLength(
      summary.invocations.filter((i) => i.status === 'failed').length,
    );
    const agents = spans.filter((s) => attributes(s)['gen_ai.operation.name'] === 'invoke_agent');
    expect(agents).toHaveLength(1 + summary.delegations.length + summary.panelDispatches.length);
  });
});
