import { ConfigError } from '../src/index.ts';

/** The ConfigError `fn` throws; fails the test when it throws nothing or something else. */
export function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
