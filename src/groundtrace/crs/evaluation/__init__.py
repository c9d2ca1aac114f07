"""Running and scoring systems: the runner (class / HTTP / predictions file) and run scoring."""
