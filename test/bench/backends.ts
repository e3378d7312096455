/**
 * Whether the per-call scenarios also measure the PostgreSQL backend, next to Redis in the same rounds:
 * on unless `SWITCHYARD_BENCH_POSTGRES=0` (e.g. on a machine without PostgreSQL for the queues).
 */
export const WITH_POSTGRES = process.env.SWITCHYARD_BENCH_POSTGRES?.trim() !== '0';

/**
 * `SWITCHYARD_BENCH_ONLY=latency,serialized,…`: run only these scenarios (by their results key) and
 * print their tables, without rewriting results.json or the README. Unset: every scenario.
 */
export const ONLY: Set<string> | undefined = process.env.SWITCHYARD_BENCH_ONLY?.trim()
  ? new Set(process.env.SWITCHYARD_BENCH_ONLY.split(',').map((name) => name.trim()))
  : undefined;
