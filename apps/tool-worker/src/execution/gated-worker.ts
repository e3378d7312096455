import { type BackendFactory, type Job, type Processor, type Span, Worker, type WorkerOptions } from 'bullmq';

/** When a fetch may go ahead (GlobalConcurrency): `ready` to wait for it, `isOpen` to ask now. */
export interface FetchGate {
  ready(): Promise<void>;
  readonly isOpen: boolean;
}

/**
 * A BullMQ Worker that takes no job while its gate is closed: after a reconnect, until the queue's
 * global concurrency is set again. Every way BullMQ takes a job goes through one of these hooks — the
 * fetch (`moveToActive`, also after a blocking wait that a marker or its timeout ended) and the
 * fetch-next of a finishing job — so no job moves to active past a Redis that forgot the limit.
 */
export class GatedWorker<Data, Result> extends Worker<Data, Result> {
  constructor(
    name: string,
    processor: Processor<Data, Result>,
    options: WorkerOptions,
    private readonly gate: FetchGate,
    /** BullMQ's PostgreSQL backend on the postgres store; undefined: its Redis default. */
    factory?: BackendFactory<never, never>,
  ) {
    super(name, processor, options, factory as never);
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job<Data, Result>> {
    await this.gate.ready();
    // A closing worker released from the gate takes nothing: BullMQ reads "no job data" as no job.
    if (this.closing) return this.nextJobFromJobData();
    return super.moveToActive(token, name);
  }

  protected override handleCompleted(
    result: Result,
    job: Job<Data, Result>,
    token: string,
    fetchNext: () => boolean = () => true,
    span?: Span,
  ): Promise<Job<Data, Result>> {
    return super.handleCompleted(result, job, token, () => this.gate.isOpen && fetchNext(), span);
  }

  protected override handleFailed(
    error: Error,
    job: Job<Data, Result>,
    token: string,
    fetchNext: () => boolean = () => true,
    span?: Span,
  ): Promise<Job<Data, Result>> {
    return super.handleFailed(error, job, token, () => this.gate.isOpen && fetchNext(), span);
  }
}
