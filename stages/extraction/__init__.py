"""Field extraction: the rules and ERNIE-Layout extractors, hybrid policy, assembly, confidence and routing."""
