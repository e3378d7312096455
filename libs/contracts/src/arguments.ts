import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void;

export type ArgumentCheck = { ok: true; warning?: string } | { ok: false; errors: string[] };

function describe(error: ErrorObject): string {
  const where = error.instancePath ? `arguments${error.instancePath.replaceAll('/', '.')}` : 'arguments';
  if (error.keyword === 'additionalProperties') {
    return `${where}: unexpected property "${String(error.params.additionalProperty)}"`;
  }
  return `${where}: ${error.message ?? error.keyword}`;
}

/**
 * Validates tool arguments against the tool's `inputSchema` (JSON Schema, draft-07 or 2020-12).
 * Compiled validators are cached by schema text, since the same tools are called over and over.
 */
export class ArgumentValidator {
  private readonly draft7 = new Ajv({ strict: false, allErrors: true });
  private readonly draft2020 = new Ajv2020({ strict: false, allErrors: true });
  private readonly cache = new Map<string, ValidateFunction>();

  constructor() {
    addFormats(this.draft7);
    addFormats(this.draft2020);
  }

  check(inputSchema: Record<string, unknown>, args: unknown): ArgumentCheck {
    let validate: ValidateFunction;
    try {
      validate = this.compile(inputSchema);
    } catch (error) {
      // A server that publishes a broken schema should not make its tool uncallable.
      return { ok: true, warning: `inputSchema does not compile: ${(error as Error).message}` };
    }
    if (validate(args)) return { ok: true };
    return { ok: false, errors: (validate.errors ?? []).slice(0, 10).map(describe) };
  }

  private compile(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      const dialect = String(schema.$schema ?? '');
      const ajv = /2020-12|2019-09/.test(dialect) ? this.draft2020 : this.draft7;
      const { $schema: _ignored, ...rest } = schema;
      validate = ajv.compile(rest);
      if (this.cache.size > 1000) this.cache.clear();
      this.cache.set(key, validate);
    }
    return validate;
  }
}
