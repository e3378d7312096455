/** States shown in words: a call held for a person is not "dispatched" (nothing was sent). */
const LABELS: Record<string, string> = {
  awaiting_approval: 'awaiting approval',
  awaiting_input: 'awaiting input',
};

/** A status word in its colour (the same palette as the timeline's bars). */
export function StatusChip({ status }: { status: string }) {
  return (
    <span className={`chip status-${status}`} data-testid="status-chip" data-status={status}>
      {LABELS[status] ?? status}
    </span>
  );
}
