import type { AIMessage } from '@langchain/core/messages';
import { SpanKind } from '@opentelemetry/api';
import { ATTR } from '@switchyard/telemetry';
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
        [ATTR.GEN_AI_OPERATION_NAME]: 'chat',
        [ATTR.GEN_AI_PROVIDER_NAME]: spec.provider,
        [ATTR.GEN_AI_REQUEST_MODEL]: model,
        [ATTR.GRAPH_NODE]: 'model',
        [ATTR.STEP]: step,
      },
    },
    async (span) => {
      const response = await call();
      const usage = response.usage_metadata;
      if (usage) {
        span.setAttributes({
          [ATTR.GEN_AI_USAGE_INPUT_TOKENS]: usage.input_tokens,
          [ATTR.GEN_AI_USAGE_OUTPUT_TOKENS]: usage.output_tokens,
        });
      }
      span.setAttribute(ATTR.TOOL_CALLS, response.tool_calls?.length ?? 0);
      return response;
    },
  );
}
