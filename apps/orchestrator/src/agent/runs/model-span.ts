import type { AIMessage } from '@langchain/core/messages';
import { SpanKind } from '@opentelemetry/api';
import type { ModelSpec } from '../../models/index.ts';
import { inSpan } from '../../telemetry/spans.ts';

/** One model call, per the OpenTelemetry GenAI conventions: `chat {model}` with usage when reported. */
export function inModelSpan(
  spec: ModelSpec,
  step: number,
  call: () => Promise<AIMessage>,
): Promise<AIMessage> {
  const model = spec.provider === 'scripted' ? 'scripted' : spec.name;
  return inSpan(
    `chat ${model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': spec.provider,
        'gen_ai.request.model': model,
        'switchyard.graph.node': 'model',
        'switchyard.step': step,
      },
    },
    async (span) => {
      const response = await call();
      const usage = response.usage_metadata;
      if (usage) {
        span.setAttributes({
          'gen_ai.usage.input_tokens': usage.input_tokens,
          'gen_ai.usage.output_tokens': usage.output_tokens,
        });
      }
      span.setAttribute('switchyard.tool_calls', response.tool_calls?.length ?? 0);
      return response;
    },
  );
}
