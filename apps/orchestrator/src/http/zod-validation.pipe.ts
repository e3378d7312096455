import { BadRequestException, type PipeTransform } from '@nestjs/common';
import type { z } from 'zod';

/** Validates a request part with a zod schema; the 400 names every offending field. */
export class ZodValidationPipe<Schema extends z.ZodType> implements PipeTransform<unknown, z.output<Schema>> {
  constructor(
    private readonly schema: Schema,
    private readonly what: string,
  ) {}

  transform(value: unknown): z.output<Schema> {
    const result = this.schema.safeParse(value);
    if (result.success) return result.data;
    const issues = result.error.issues.slice(0, 20).map((issue) => ({
      path: issue.path.map(String).join('.') || '(root)',
      message: issue.message,
    }));
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      message: `invalid ${this.what}: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
      issues,
    });
  }
}
