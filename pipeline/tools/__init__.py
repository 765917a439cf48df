"""Tools: accuracy evaluation, scoring and the throughput bench."""
