/** A status word in its colour (the same palette as the timeline's bars). */
export function StatusChip({ status }: { status: string }) {
  return (
    <span className={`chip status-${status}`} data-testid="status-chip" data-status={status}>
      {status}
    </span>
  );
}
