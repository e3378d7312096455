import type { PipeTransform } from '@nestjs/common';
import type { z } from 'zod';
import { ProblemException } from './problem.ts';

/**
 * Validates a request part with a zod schema; the 400 (`validation-failed`) names every offending
 * field in `errors`. For a body (`{ body: true }`), no body at all means no JSON was sent: a 415.
 */
export class ZodValidationPipe<Schema extends z.ZodType> implements PipeTransform<unknown, z.output<Schema>> {
  constructor(
    private readonly schema: Schema,
    private readonly what: string,
    private readonly options: { body?: boolean } = {},
  ) {}

  transform(value: unknown): z.output<Schema> {
    // express.json leaves the body undefined when the request had none or was not JSON.
    if (this.options.body && value === undefined)
      throw new ProblemException(
        'unsupported-media-type',
        `${this.what}: a JSON body is required (Content-Type: application/json)`,
      );
    const result = this.schema.safeParse(value);
    if (result.success) return result.data;
    const errors = result.error.issues.slice(0, 20).map((issue) => ({
      path: issue.path.map(String).join('.') || '(root)',
      message: issue.message,
    }));
    throw new ProblemException(
      'validation-failed',
      `invalid ${this.what}: ${errors.map((error) => `${error.path}: ${error.message}`).join('; ')}`,
      { errors },
    );
  }
}
