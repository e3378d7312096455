import type { ModelTool } from '../../catalog/model-tool-catalog.ts';

export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * The catalog as model tools (OpenAI function format, which every LangChain provider binds). A tool
 * whose server has no ready worker stays listed, marked, so the model knows it exists but may fail.
 */
export function toFunctionTools(tools: ModelTool[]): FunctionTool[] {
  return tools.map((tool) => {
    const { $schema: _dialect, ...parameters } = tool.inputSchema;
    return {
      type: 'function',
      function: {
        name: tool.name,
        description:
          tool.availability === 'ready' ? tool.description : `[currently unavailable] ${tool.description}`,
        parameters: { type: 'object', properties: {}, ...parameters },
      },
    };
  });
}
