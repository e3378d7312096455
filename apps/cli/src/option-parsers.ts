import { JOB_STATUSES } from '@switchyard/client';
import { InvalidArgumentError } from 'commander';

/** Option values commander cannot check by itself; a wrong one is a usage error (exit 2) naming it. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];
/** Commander checks `.choices()` only without a parser of its own; this one checks and collects. */
export const statusList = (value: string, previous: string[] = []) => {
  if (!(JOB_STATUSES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`Allowed choices are ${JOB_STATUSES.join(', ')}.`);
  return [...previous, value];
};
export const positiveInt = (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
  return Number(value);
};
