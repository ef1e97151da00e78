"""Rule families as pure functions over the board; each raises RuleViolation citing its rule ID."""
