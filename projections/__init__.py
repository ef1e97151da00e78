"""Read models built from the event log: one-line event summaries and board views for display."""
