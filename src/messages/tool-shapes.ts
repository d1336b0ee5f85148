/**
 * One function tool of contextkit's own (`recall`, `compact`) in each provider's documented tool
 * shape, from its name, description and JSON Schema: OpenAI Chat Completions (`{ type:
 * 'function', function: { … } }`), OpenAI Responses (flat `{ type: 'function', name, … }`),
 * Anthropic Messages (`input_schema`), Gemini (`parametersJsonSchema`) and AWS Bedrock Converse
 * (`toolSpec.inputSchema.json`).
 */
import type { ToolDefinition } from './types.js';

/** A tool's definitions, one per shape. */
export interface ToolShapes {
  openai: ToolDefinition;
  responses: ToolDefinition;
  anthropic: ToolDefinition;
  gemini: ToolDefinition;
  bedrock: { toolSpec: { name: string; description: string; inputSchema: { json: object } } };
}

/** The definitions of one function tool in every shape. */
export function toolShapes(name: string, description: string, parameters: object): ToolShapes {
  return {
    openai: { type: 'function', function: { name, description, parameters } },
    responses: {
      type: 'function',
      name,
      description,
      parameters,
      strict: false,
    } as unknown as ToolDefinition,
    anthropic: { name, description, input_schema: parameters },
    gemini: { name, description, parametersJsonSchema: parameters },
    bedrock: { toolSpec: { name, description, inputSchema: { json: parameters } } },
  };
}
